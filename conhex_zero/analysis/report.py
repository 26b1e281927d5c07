"""The rules sheet's questions answered with measured numbers: a short Markdown report with figures.

``write_report(stats, openings, out_dir)`` takes the counts of ``game_stats.collect`` and an
opening analysis and writes ``report.md``, ``report.json`` and one picture per question where a
picture says more than a table. Every rate comes with its 95% (Wilson) interval; the text states
what the numbers show and nothing they do not.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

from conhex_zero.analysis.game_stats import GameStats
from conhex_zero.analysis.opening_table import OpeningTable
from conhex_zero.analysis.openings import PositionAnalysis
from conhex_zero.analysis.pictures import draw_length_histogram, draw_openings_map, draw_rates
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.ladder.ratings import wilson
from conhex_zero.viz.board_picture import draw_board_map


def _pct(x: float) -> str:
    return f"{100 * x:.1f}%"


def _rate(wins: int, games: int) -> str:
    if games == 0:
        return "no games"
    lo, hi = wilson(wins, games)
    return f"{_pct(wins / games)} [{_pct(lo)}, {_pct(hi)}] ({wins}/{games})"


def _distinct(rule) -> str:
    """``200 games`` or ``198 distinct games of 200``."""
    played = rule.played or rule.games
    return f"{rule.games} games" if rule.games == played else f"{rule.games} distinct games of {played}"


def _overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] <= b[1] and b[0] <= a[1]


def write_report(stats: GameStats, openings: PositionAnalysis | None, out_dir: str | Path,
                 command: str = "", size: tuple[int, int] = (800, 800), table: OpeningTable | None = None,
                 book: tuple[list[str], dict] | None = None) -> Path:
    """Write ``report.md`` (and its pictures and ``report.json``) into ``out_dir``; returns the .md path.
    ``table`` (of ``openings``) adds the second model's verdicts and the empirical check; ``book``
    (Markdown lines and JSON of ``book.table``) the opening book's first-move table."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    # The numbers first: whatever happens to the pictures, the measurements are kept.
    opening_json = (table.to_json() if table is not None else openings.to_json()) if openings is not None else None
    (out / "report.json").write_text(json.dumps({"stats": stats.to_json(), "openings": opening_json,
                                                 **({"book": book[1]} if book is not None else {})}, indent=1) + "\n")
    env = VecEnv(stats.game)
    board = env.game.board
    names = board.hole_names
    H, C = len(names), len(board.cell_holes)
    md: list[str] = [
        f"# {board.name}: the rules sheet's questions, measured",
        "",
        f"Self-play of `{stats.player}` against itself ({stats.sims} simulations a move, "
        f"{'Gumbel' if stats.positions else 'Dirichlet'} root noise so that games differ): "
        f"{_distinct(stats.no_swap)} without the pie rule and "
        f"{_distinct(stats.swap)} with it"
        + (f", plus {stats.random_games} uniformly random games." if stats.random_games else "."),
        "Intervals are 95% (Wilson), over distinct games (a game that repeats an earlier one move for move, "
        "up to the board's symmetry, is counted once). Measured numbers describe this player's games; a "
        "stronger player may play differently.",
        "",
    ]
    if command:
        md += [f"Command: `{command}`", ""]

    # 1. Holes.
    influence = [stats.hole_taken_by_winner[h] / stats.hole_taken[h] if stats.hole_taken[h] else math.nan
                 for h in range(H)]
    intervals = [wilson(stats.hole_taken_by_winner[h], stats.hole_taken[h]) for h in range(H)]
    weight = [s / max(stats.positions, 1) for s in stats.hole_prior_sum]
    ranked = sorted((h for h in range(H) if stats.hole_taken[h] >= 5), key=lambda h: -influence[h])
    draw_board_map(env.game, out / "holes_influence.png", size=size,
                   hole_values=[100 * v for v in influence],
                   hole_labels=[None if math.isnan(v) else f"{100 * v:.0f}" for v in influence],
                   title="How often the player holding a hole at the end won (%)",
                   colorbar_label="holder's win %", vmin=0, vmax=100)
    md += ["## 1. Do all holes have the same influence?", ""]
    if len(ranked) >= 2:
        top, bottom = ranked[0], ranked[-1]
        differ = not _overlap(intervals[top], intervals[bottom])
        md += [f"{'No' if differ else 'Not measurably'}: the player holding **{names[top]}** at the end won "
               f"{_rate(stats.hole_taken_by_winner[top], stats.hole_taken[top])} of the games, the player "
               f"holding **{names[bottom]}** only "
               f"{_rate(stats.hole_taken_by_winner[bottom], stats.hole_taken[bottom])}"
               + ("; the intervals do not overlap." if differ else "; the intervals overlap, more games would "
                  "tell."), ""]
    md += ["| most influential | holder won | least influential | holder won |", "|---|---|---|---|"]
    for a, b in zip(ranked[:5], ranked[::-1][:5]):
        md.append(f"| {names[a]} | {_rate(stats.hole_taken_by_winner[a], stats.hole_taken[a])} | {names[b]} | "
                  f"{_rate(stats.hole_taken_by_winner[b], stats.hole_taken[b])} |")
    md += ["", "![hole influence](holes_influence.png)", ""]
    if stats.positions:
        draw_board_map(env.game, out / "policy_weight.png", size=size, hole_values=[100 * w for w in weight],
                       hole_labels=[f"{100 * w:.1f}" for w in weight], cmap="Greens", vmin=0,
                       title="The network's average prior on each hole (% per position)",
                       colorbar_label="average prior %")
        by_weight = sorted(range(H), key=lambda h: -weight[h])
        md += ["Where the network's policy puts its weight: its favourite holes over all positions are "
               + ", ".join(f"{names[h]} ({_pct(weight[h])})" for h in by_weight[:5]) + "; the least favoured "
               + ", ".join(f"{names[h]} ({_pct(weight[h])})" for h in by_weight[::-1][:3]) + ".", "",
               "![policy weight](policy_weight.png)", ""]

    # 2. Cells on the winning chain.
    decided = max(stats.decided_games, 1)
    chain = [stats.cell_on_chain[c] / decided for c in range(C)]
    one_hole_cells = all(len(holes) == 1 for holes in board.cell_holes)  # Hex: colour the holes themselves
    hole_chain = [math.nan] * H
    for c, holes in enumerate(board.cell_holes):
        if one_hole_cells:
            hole_chain[holes[0]] = 100 * chain[c]
    draw_board_map(env.game, out / "winning_chains.png", size=size, cmap="Oranges", vmin=0, vmax=100,
                   cell_values=None if one_hole_cells else [100 * v for v in chain],
                   hole_values=hole_chain if one_hole_cells else None,
                   hole_labels=[f"{v:.0f}" for v in hole_chain] if one_hole_cells else None,
                   title="How often each cell lies on the winning chain (%)", colorbar_label="% of decided games")
    top_cells = sorted(range(C), key=lambda c: -chain[c])
    md += ["## 2. Which cells are on most winning chains?", "",
           "The winning chain is the winner's connected group of conquered cells that touches both of the "
           f"winner's sides. Over {stats.decided_games} decided games:", "",
           "| cell | holes | on the winning chain |", "|---|---|---|"]
    for c in top_cells[:8]:
        md.append(f"| {c} | {' '.join(names[h] for h in board.cell_holes[c])} | "
                  f"{_rate(stats.cell_on_chain[c], stats.decided_games)} |")
    md += ["", "![winning chains](winning_chains.png)", ""]

    # 3. Strategy.
    md += ["## 3. What do 1 and 2 suggest for strategy?", "",
           f"- Take the influential holes early: {', '.join(names[h] for h in ranked[:4])} go with winning most "
           "often.",
           f"- Build towards the cells that winning chains use most ({', '.join(str(c) for c in top_cells[:4])}): "
           "a hole that counts for several of them does double duty.",
           "- These are correlations in one player's games, not proofs: a hole held by the winner may be "
           "a consequence of winning as much as a cause.", ""]

    # 4. First player advantage.
    ns, ws = stats.no_swap, stats.swap
    rows = [("self-play, no pie rule", ns.first_wins, ns.games), ("self-play, pie rule", ws.first_wins, ws.games)]
    if stats.random_games:
        rows.append(("random play", stats.random_first_wins, stats.random_games))
    draw_rates([(label, w / g, *wilson(w, g)) for label, w, g in rows if g], out / "first_player.png",
               title="Does the first player have an advantage?")
    md += ["## 4. Does the first player have an advantage?", "",
           "| games | first player won |", "|---|---|"]
    md += [f"| {label} | {_rate(w, g)} |" for label, w, g in rows]
    lo, hi = wilson(ns.first_wins, ns.games)
    share = _pct(ns.first_wins / max(ns.games, 1))
    if lo > 0.5:
        verdict = f"Yes: without the pie rule the first player wins {share} of the games; the interval lies above one half."
    elif hi < 0.5:
        verdict = f"No, the second player has it: the first player wins only {share}; the interval lies below one half."
    else:
        verdict = f"Not measurably: the first player wins {share}, and the interval includes one half."
    md += ["", verdict]
    if stats.random_games:
        rlo, rhi = wilson(stats.random_first_wins, stats.random_games)
        side = "above" if rlo > 0.5 else "below" if rhi < 0.5 else "around"
        md.append(f"Under uniformly random play the first player wins "
                  f"{_rate(stats.random_first_wins, stats.random_games)}: the interval lies {side} one half.")
    md.append("")
    if openings is not None:
        best = openings.groups()[0][0]
        md += [f"The opening analysis: after the strongest opening ({best.move}) the first player's win chance "
               f"is {_pct(best.win_rate)} when the second player does not swap.", ""]
    md += ["![first player](first_player.png)", ""]

    # 5. Fairness.
    md += ["## 5. How can the game be made fairer?", "",
           f"The pie rule: the second player swapped in {_rate(ws.swaps, ws.games)} of the games, and the first "
           f"player's win rate went from {_pct(ns.first_wins / max(ns.games, 1))} without it to "
           f"{_pct(ws.first_wins / max(ws.games, 1))} with it.", ""]
    if openings is not None:
        swaps = sum(1 for m in openings.moves if m.swap)
        total = len(openings.moves)
        undecided = openings.undecided()
        stability = ""
        levels = [e for e in openings.efforts if e != openings.sims] or (
            [openings.compare_sims] if openings.compare_sims else [])
        efforts = " and ".join(str(e) for e in sorted({openings.sims, *levels}))
        if levels:
            stability = (f" {openings.stable_count} of {total} openings are stable: every search at "
                         f"{efforts} simulations ({openings.repeats} repeats each, and the "
                         "symmetric openings) puts them on the same side of 50%, or the search proved their result. ")
            stability += ("The others are undecided at this effort, and so is their swap verdict: "
                          + ", ".join(f"{'/'.join(m.move for m in g)} ("
                                      + ", ".join(f"{_pct(g[0].efforts.get(e, g[0].win_rate))} at {e}"
                                                  for e in sorted({openings.sims, *levels})) + ")" for g in undecided)
                          + ". " if undecided else "All are decided at this effort. ")
        md += [f"Swap map: the second player should swap after {swaps} of {total} openings.{stability}"
               "Under the pie rule the first player should open where the win chance is closest to 50%; the "
               "fairest openings are:", "", "| openings | first player's win % (no swap) | spread | stable |",
               "|---|---|---|---|"]
        for g in openings.fairest(5):
            stable = f"proven {g[0].proven}" if g[0].proven else "yes" if g[0].stable else "no (undecided)"
            md.append(f"| {' '.join(m.move for m in g)} | {_pct(g[0].win_rate)} | {_pct(g[0].win_rate_spread)} "
                      f"| {stable} |")
        draw_openings_map(openings, env, env.initial_state(1), out / "openings.png", size)
        md += ["", f"Opening analysis: `{openings.checkpoint}`, {openings.sims} simulations x {openings.repeats} "
               "searches per opening" + (f", checked at {', '.join(str(e) for e in levels)}" if levels else "")
               + "; on the map, undecided openings carry a question mark.", "", "![openings](openings.png)", ""]
        md += opening_table_section(openings, table, levels)
    if book is not None:
        md += book[0]

    # 6. Draws.
    draws = ns.draws + ws.draws
    series = {"self-play, no pie rule": ns.lengths, "self-play, pie rule": ws.lengths}
    if stats.random_games:
        series["random play"] = stats.random_lengths
    draw_length_histogram(series, out / "game_lengths.png", title=f"{board.name}: game lengths")
    md += ["## 6. Can the game end in a draw?", "",
           f"No drawn game was seen: {draws} draws in {ns.games + ws.games} self-play games"
           + (f" and {stats.random_draws} in {stats.random_games} random games played until the board decided"
              if stats.random_games else "") + ". "
           "This matches the rules: when every hole is filled exactly one player has a connecting chain (in "
           "ConHex because cells are conquered at half their holes and the corner cells count for both sides "
           "they touch; in Hex by the Hex theorem), so every game ends with a winner.", "",
           "| games | mean length | shortest | longest |", "|---|---|---|---|"]
    for label, lengths in series.items():
        if lengths:
            md.append(f"| {label} | {sum(lengths) / len(lengths):.1f} | {min(lengths)} | {max(lengths)} |")
    md += ["", "![game lengths](game_lengths.png)", ""]

    path = out / "report.md"
    path.write_text("\n".join(md) + "\n")
    return path


def opening_table_section(openings: PositionAnalysis, table: OpeningTable | None, levels: list[int]) -> list[str]:
    """The whole opening table (one row per opening up to symmetry), the second model's verdicts and
    the empirical check, as Markdown."""
    efforts = sorted({openings.sims, *levels})
    other = table.other if table is not None else None
    md = ["### The opening table", "",
          f"Every first move up to symmetry: the first player's win chance when the second player does not swap, "
          f"at {', '.join(str(e) for e in efforts)} simulations; stable: the same side of 50% in every search; "
          f"swap: the pie-rule decision at {openings.sims}."]
    if other is not None:
        agree, both = table.agreement()
        md[-1] += (f" Second model `{other.checkpoint}`: its win chance at {other.sims} (? where not stable) and "
                   f"whether its swap decision agrees; on the {both} openings stable for both, the decisions agree "
                   f"for {agree}" + (f" ({_pct(agree / both)})." if both else "."))
    checks = {tuple(c.moves): c for c in table.checks} if table is not None else {}
    header = "| openings | " + " | ".join(f"@{e}" for e in efforts) + " | stable | swap |"
    rule = "|---|" + "---|" * len(efforts) + "---|---|"
    if other is not None:
        header += " second model | agree |"
        rule += "---|---|"
    if checks:
        header += " self-play check |"
        rule += "---|"
    md += ["", header, rule]
    for g in openings.groups():
        m = g[0]
        stable = f"proven {m.proven}" if m.proven else "yes" if m.stable else "no"
        row = (f"| {' '.join(x.move for x in g)} | " + " | ".join(_pct(m.efforts.get(e, m.win_rate)) for e in efforts)
               + f" | {stable} | {'-' if m.swap is None else 'yes' if m.swap else 'no'} |")
        if other is not None:
            o = table.other_move(m.move)
            row += (f" {_pct(o.win_rate)}{'' if o.stable else '?'} | "
                    f"{'-' if o.swap is None or m.swap is None else 'yes' if o.swap == m.swap else '**no**'} |"
                    if o is not None else " - | - |")
        if checks:
            c = checks.get(tuple(x.move for x in g))
            row += (f" {_rate(c.first_wins, c.games)}: "
                    f"{ {True: 'agrees', False: '**disagrees**', None: 'undecided'}[c.agrees]} |" if c else " |")
        md.append(row)
    if table is not None and table.checks:
        checked, decided, agree = table.check_summary()
        md += ["", f"Self-play check: {table.check_games} games of the model against itself from each of {checked} "
               f"openings (the best and worst rated, and those where the models disagree), {table.check_sims} "
               f"simulations a move with root noise, pie rule off after the opening; the first player's score over "
               f"distinct games with its 95% interval. {decided} of the {checked} intervals exclude 50%; the table's "
               f"swap decision agrees with {agree} of them."]
    return md + [""]
