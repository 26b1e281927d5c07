"""One game between a person (or a GUI, or another program) and an AI player, independent of any
user interface: the terminal game, the GTP engine and the browser page all drive this class.

    s = PlaySession("hex-5", "checkpoints/hex5-l4h64.pt", simulations=200)
    s.play("c3")                  # a name ("F6", "swap"; "swap-pieces" too) or an action id
    reply = s.ai_move()           # AIMove: action, move name, Analysis of the position it chose in
    s.analyse(top=5), s.hint()    # the AI's view of the position, without playing
    s.undo(2)                     # take back moves (the game is replayed from its start)
    s.to_json()                   # everything a page needs to draw the position (plain JSON types)

The AI is any player ``make_player`` knows: ``random``, ``mcts-rollout:K``, ``policy:CKPT``,
``CKPT[:sims=N]``, ``gtp:COMMAND``. Its analysis depends on what it is: search players report
their search (root value, visits, mean values, priors and principal variations of the root
moves); ``policy:CKPT`` reports the network's value and prior; random players and external
engines report nothing (an ``Analysis`` with ``value=None`` and no candidates).

Values are always for the side to move at the analysed position, in [-1, 1]; ``win_percent`` is
``50 * (1 + value)``. A search's value of a position is the mean value of the move it chooses
there (a candidate's ``value`` is its own mean value, None when unvisited). Where the search proved
a result (``proven``: ``"win"`` or ``"loss"`` for the side to move, see ``search.mcts``), the value
is exactly +1 or -1; a candidate's ``proven`` says the same of the position after its move. Strength can be lowered
by fewer simulations, by a temperature (the AI's move
is then drawn from visit counts ** (1 / T), or from the prior ** (1 / T) for a policy player, with
a random draw that depends only on the seed and the position), or by playing an older checkpoint.

Errors: a name that is not a move raises ``MoveError`` (with nearby hole names); an illegal move
raises ``IllegalMoveError`` (its ``reason`` says why); asking for a move of a finished game,
undoing too far or an engine failure raises ``PlayError``. All three are ``ValueError``\\ s.
"""

from __future__ import annotations

import dataclasses
import threading
import zlib
from typing import Any, Callable

import torch

from conhex_zero.agents.players import PolicyPlayer, SearchPlayer, make_player
from conhex_zero.play.ai_view import AIMove, Analysis, Candidate, proof_word
from conhex_zero.env.notation import IllegalMoveError, render_state, summarize
from conhex_zero.env.state import State
from conhex_zero.env.vec_env import VecEnv
from conhex_zero.games.game import Game, MoveError
from conhex_zero.games.render import PLAYER_GOALS, PLAYER_NAMES
from conhex_zero.search.mcts import SearchOutput

SWAP_ALIASES = ("swap-pieces", "swap-sides")
"""Other programs' names for the swap (HexGui, MoHex); read as ``swap``."""


class PlayError(ValueError):
    """A request the game cannot take now (game over, nothing to undo, the AI failed)."""


def side_name(player: int) -> str:
    """``X (first player, top-bottom)`` and the like."""
    return f"{PLAYER_NAMES[player]} ({'first' if player == 0 else 'second'} player, {PLAYER_GOALS[player]})"


def position_line(facts: dict) -> str:
    """Whose turn it is or who won, and the position's ply: the number of moves played, as in
    ``summarize`` and ``to_json`` (``X to move (top-bottom) after 3 plies``)."""
    ply = facts["ply"]
    plies = f"{ply} {'ply' if ply == 1 else 'plies'}"
    if facts["winner"] is not None:
        w = facts["winner"]
        return f"{PLAYER_NAMES[w]} wins ({PLAYER_GOALS[w]} connected) after {plies}"
    p = facts["to_move"]
    return f"{PLAYER_NAMES[p]} to move ({PLAYER_GOALS[p]}) after {plies}"


class Pondering:
    """A search of the opponent's position in a background thread (``SearchPlayer.ponder``); its
    simulations done are appended to ``done`` when it ends; ``stop()`` ends it and waits."""

    def __init__(self, player: SearchPlayer, state: State, history: list[int], done: list[int]):
        self._stopping = threading.Event()
        self.error: BaseException | None = None

        def run() -> None:
            try:
                done.append(player.ponder(state, history, self._stopping.is_set))
            except BaseException as err:  # noqa: BLE001 - kept: ``stop`` raises it in the caller's thread
                self.error = err

        self._thread = threading.Thread(target=run, name="ponder", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        self._thread.join()
        if self.error is not None:
            raise self.error


class PlaySession:
    """One game (a batch-1 engine state and its move list) against one AI player."""

    def __init__(self, game: str | Game = "conhex", player: str = "random", seed: int = 0,
                 simulations: int | None = None, temperature: float = 0.0, device: str | torch.device = "cpu",
                 random_opening: bool = True, gtp_timeout: float = 10.0, seconds: float | None = None,
                 ponder: bool = False, book: str | None = None):
        if temperature < 0:
            raise PlayError("the temperature must be 0 (best move) or positive")
        if simulations is not None and simulations < 1:
            raise PlayError("simulations must be at least 1")
        self.env = VecEnv(game, device)
        self.game: Game = self.env.game
        self.seed = seed
        self.temperature = float(temperature)
        self.random_opening = random_opening
        self.player = make_player(player, self.env, seed=seed, simulations=simulations,
                                  gtp_timeout=gtp_timeout, gtp_parallel=1, seconds=seconds)
        # A simulation count that the user gave (``--sims``, ``CKPT:sims=N``) bounds the searches
        # that a clock times (GTP's time controls): they think at most that much.
        self.simulation_cap: int | None = None
        if isinstance(self.player, SearchPlayer) and self.player.seconds is None and (
                simulations is not None or ":sims=" in player):
            self.simulation_cap = self.player.search.config.num_simulations
        self.book = None
        """The opening book (``book.lookup.BookLookup``) when one is given for this game: its best move
        is played, and its values shown, while the position is in the book."""
        if book is not None:  # a book of another game (GTP's boardsize, the page's game menu) is not used
            from conhex_zero.book.lookup import BookLookup, book_game
            from conhex_zero.play.checkpoints import same_game

            self.book = BookLookup(book, self.env) if same_game(book_game(book), self.game) else None
        self.actions: list[int] = []
        self.opening = 0
        self.state: State = self.env.initial_state(1)
        self._cache: tuple[tuple, SearchOutput] | None = None
        self.on_simulation: Callable[[int, int], None] | None = None
        """Called as ``on_simulation(k, total)`` after the k-th simulation of a search (progress)."""
        self.ponder = ponder and isinstance(self.player, SearchPlayer)
        """Think on the opponent's time: after each AI move, search on in a background thread
        until the session is asked to think again (``Pondering``)."""
        self._pondering: Pondering | None = None
        self.pondered: list[int] = []
        """Simulations each pondering search added, in order (the last is the latest)."""
        self.new_game()

    # ------------------------------------------------------------------ game
    def new_game(self) -> None:
        """Start again from the empty board (with fresh random opening pieces, if the game has them
        and ``random_opening``: drawn from the seed, so a session's openings are reproducible)."""
        self.stop_pondering()
        self.actions, self.opening = [], 0
        self.state = self.env.initial_state(1)
        self._cache = None
        if self.random_opening and self.game.opening_plies:
            self.actions = self._draw_opening()
            self.opening = len(self.actions)
            self.state = self._replay(self.actions)

    def _draw_opening(self) -> list[int]:
        gen = torch.Generator(device=self.env.device)
        gen.manual_seed(self.seed)
        for _attempt in range(100):
            state, actions = self.env.initial_state(1), []
            for _ply in range(self.game.opening_plies):
                a = self.env.random_actions(state, gen)
                actions.append(int(a[0]))
                state = self.env.step(state, a)
            if not bool(state.done[0]):
                return actions
        raise PlayError(f"{self.game.spec}: random openings keep finishing the game; use fewer random pieces")

    def _replay(self, actions: list[int]) -> State:
        state = self.env.initial_state(1)
        for a in actions:
            state = self.env.step(state, torch.tensor([a], device=self.env.device))
        return state

    def close(self) -> None:
        """Stop pondering and the player's engine processes, if it has any."""
        self.stop_pondering()
        if hasattr(self.player, "close"):
            self.player.close()

    # ---------------------------------------------------------------- facts
    @property
    def player_name(self) -> str:
        return self.player.name

    @property
    def moves(self) -> list[str]:
        """The game's moves by name, random opening pieces included."""
        return [self.game.action_name(a) for a in self.actions]

    @property
    def ply(self) -> int:
        return len(self.actions)

    @property
    def winner(self) -> int | None:
        w = int(self.state.winner[0])
        return None if w < 0 else w

    @property
    def is_over(self) -> bool:
        return self.winner is not None

    @property
    def to_move(self) -> int | None:
        """The player to move (0 = first, X; 1 = second, O), None once the game is over."""
        return None if self.is_over else int(self.state.to_move[0])

    @property
    def last_action(self) -> int | None:
        return self.actions[-1] if len(self.actions) > self.opening else None

    @property
    def undoable(self) -> int:
        """How many moves ``undo`` can take back (not the random opening pieces)."""
        return len(self.actions) - self.opening

    @property
    def simulations(self) -> int | None:
        """The search player's simulations per move (None for players without a search)."""
        return self.player.search.config.num_simulations if isinstance(self.player, SearchPlayer) else None

    def mover_of(self, ply: int) -> int:
        """The player who moves (or moved) at ``ply`` (0-based)."""
        return int(self.game.turn_table[ply])

    def legal_actions(self) -> list[int]:
        return self.env.legal_mask(self.state)[0].nonzero().squeeze(1).tolist()

    def legal_moves(self) -> list[str]:
        """Names of the legal moves (``swap`` included when it is legal); empty once the game is over."""
        return [self.game.action_name(a) for a in self.legal_actions()]

    @property
    def swap_legal(self) -> bool:
        return bool(self.env.legal_mask(self.state)[0, self.game.swap_action])

    # ---------------------------------------------------------------- moves
    def parse(self, move: str | int) -> int:
        """The action id of a move name or id; ``MoveError`` for a name that is not a move."""
        if isinstance(move, bool):
            raise MoveError(f"{move!r} is not a move")
        if isinstance(move, int):
            return move
        text = str(move).strip()
        if text.lower() in SWAP_ALIASES:
            text = "swap"
        return self.game.parse_move(text)

    def play(self, move: str | int) -> int:
        """Play a move for the side to move; returns its action id.

        ``MoveError``: not a move of this game; ``IllegalMoveError``: not legal here (see ``reason``).
        """
        action = self.parse(move)
        label = self.game.action_name(action) if 0 <= action < self.env.num_actions else str(move)
        if not 0 <= action < self.env.num_actions or not bool(self.env.legal_mask(self.state)[0, action]):
            raise IllegalMoveError(len(self.actions) + 1, label, self.env.why_illegal(self.state, 0, action))
        self.state = self.env.step(self.state, torch.tensor([action], device=self.env.device))
        self.actions.append(action)
        return action

    def undo(self, n: int = 1) -> list[str]:
        """Take back the last ``n`` moves (replaying the game from its start); their names."""
        if n < 1:
            raise PlayError("undo needs a positive number of moves")
        if n > self.undoable:
            raise PlayError("nothing to undo" if self.undoable == 0 else
                            f"only {self.undoable} move{'s' * (self.undoable != 1)} can be taken back")
        self.stop_pondering()
        removed = self.moves[-n:]
        self.actions = self.actions[:-n]
        self.state = self._replay(self.actions)
        return removed

    # ------------------------------------------------------------- thinking
    def _require_running(self) -> None:
        if self.is_over:
            raise PlayError(f"the game is over: {PLAYER_NAMES[self.winner]} won")

    def _search(self, simulations: int | None, seconds: float | None = None) -> SearchOutput:
        """The player's search of the current position: ``simulations`` or ``seconds`` override its
        own effort for this search (a clock: GTP's time controls); the tree of its previous search
        of this game carries over where the position follows from it."""
        player = self.player
        assert isinstance(player, SearchPlayer)
        self.stop_pondering()
        config = player.search.config
        timed = seconds if seconds is not None else (None if simulations else player.seconds)
        sims = simulations or config.num_simulations
        key = (tuple(self.actions), sims, timed)
        if self._cache is not None and self._cache[0] == key:
            return self._cache[1]
        if timed is None and sims != config.num_simulations:
            player.search.config = dataclasses.replace(config, num_simulations=sims)
        own_seconds, player.seconds = player.seconds, timed
        own_cap, player.max_simulations = player.max_simulations, self.simulation_cap
        search = player.search
        hook = self.on_simulation
        own_run = vars(search).get("run")
        if hook is not None:  # the player's search reports each simulation through the hook
            run = search.run

            def run_with_progress(*args: Any, **kwargs: Any) -> SearchOutput:
                kwargs.setdefault("on_simulation", lambda k: hook(k, search.config.num_simulations))
                return run(*args, **kwargs)

            search.run = run_with_progress
        try:
            player.act(self.state, history=[list(self.actions)])
        finally:
            player.search.config = config
            player.seconds, player.max_simulations = own_seconds, own_cap
            if hook is not None:
                if own_run is None:
                    del search.run
                else:
                    search.run = own_run
        assert player.last is not None
        self._cache = (key, player.last)
        return player.last

    def _pv(self, out: SearchOutput, action: int) -> list[str]:
        """The most visited line after ``action`` in the search tree, with ``action`` first."""
        depth = max(getattr(self.player.search.config, "pv_depth", 8), 1)
        line = out.line(torch.tensor([action], device=out.action.device), depth)[0].tolist()
        return [self.game.action_name(a) for a in line if a >= 0]

    def _think(self, top: int, simulations: int | None = None,
               seconds: float | None = None) -> tuple[Analysis, int, torch.Tensor | None]:
        """The analysis, the player's own (greedy) choice, and weights to sample from (or None)."""
        self._require_running()
        player, name = self.player, self.game.action_name
        mover = int(self.state.to_move[0])
        view = self.book_view()
        if view is not None and view.best is not None:  # in the book: its move, no search
            cands = [Candidate(m.move, m.action, 0, 2 * m.win - 1, 0.0, [m.move], m.proven, m.nodes)
                     for m in view.moves[:max(top, 0)]]
            return Analysis(mover, 2 * view.win - 1, cands, 0, "book", view.proven), view.best, None
        if isinstance(player, SearchPlayer):
            out = self._search(simulations, seconds)
            visits = out.visit_counts[0].float().cpu()
            q = out.q_values[0].float().cpu()
            prior = out.tree.prior[0, 0].float().cpu()
            legal = out.tree.legal[0, 0].cpu()
            chosen = int(out.action[0])
            order = sorted(legal.nonzero().squeeze(1).tolist(),
                           key=lambda a: (a == chosen, float(visits[a]), float(prior[a])), reverse=True)
            edge_proven = out.edge_proven[0].cpu() if out.edge_proven is not None else torch.zeros_like(visits)
            cands = [Candidate(name(a), a, int(visits[a]), float(q[a]) if visits[a] > 0 else None,
                               float(prior[a]), self._pv(out, a), proof_word(int(edge_proven[a])))
                     for a in order[:max(top, 0)]]
            # The value of the chosen move: the root's mean also averages the weak moves a search
            # tries (Gumbel's sequential halving visits many), which would understate a position.
            value = float(q[chosen]) if visits[chosen] > 0 else float(out.root_value[0])
            root_proven = int(out.root_proven[0]) if out.root_proven is not None else 0
            if root_proven:
                value = float(root_proven)
            carried = player.last_carried[0] if player.last_carried else 0
            analysis = Analysis(mover, value, cands, int(visits.sum()), "search", proof_word(root_proven), carried)
            return analysis, chosen, torch.where(legal, visits, 0.0)
        if isinstance(player, PolicyPlayer):
            logits, value = player.evaluator(self.state)
            legal = self.env.legal_mask(self.state)[0].cpu()
            prior = torch.softmax(torch.where(legal, logits[0].float().cpu(), -float("inf")), 0)
            order = sorted(legal.nonzero().squeeze(1).tolist(), key=lambda a: float(prior[a]), reverse=True)
            cands = [Candidate(name(a), a, 0, None, float(prior[a]), [name(a)]) for a in order[:max(top, 0)]]
            return Analysis(mover, float(value[0]), cands, 0, "network"), order[0], prior
        action = int(player.act(self.state, history=[list(self.actions)])[0])
        if action < 0:
            reason = getattr(player, "last_failures", {}).get(0, "no move")
            raise PlayError(f"{player.name} failed to move: {reason}")
        return Analysis(mover, None, [], 0, "none"), action, None

    def _sample(self, weights: torch.Tensor) -> int:
        """A draw from ``weights ** (1 / T)``, seeded by the session seed and the position."""
        w = weights.double().clamp(min=0)
        w = (w / w.max()) ** (1.0 / self.temperature)
        gen = torch.Generator().manual_seed(zlib.crc32(f"{self.seed}:{self.actions}".encode()))
        return int(torch.multinomial(w, 1, generator=gen)[0])

    def analyse(self, top: int = 5, simulations: int | None = None, seconds: float | None = None) -> Analysis:
        """The AI's analysis of the current position (its ``top`` candidate moves), nothing played."""
        return self._think(top, simulations, seconds)[0]

    def hint(self, top: int = 5, simulations: int | None = None, seconds: float | None = None) -> AIMove:
        """The move the AI would choose at temperature 0, for the side to move; nothing played."""
        analysis, action, _ = self._think(top, simulations, seconds)
        return AIMove(action, self.game.action_name(action), analysis)

    def ai_move(self, top: int = 5, simulations: int | None = None, seconds: float | None = None) -> AIMove:
        """The AI chooses a move for the side to move and plays it.

        ``simulations`` or ``seconds`` override the search player's effort for this move (time
        controls)."""
        analysis, action, weights = self._think(top, simulations, seconds)
        if self.temperature > 0 and weights is not None and float(weights.max()) > 0:
            action = self._sample(weights)
        self.play(action)
        if self.ponder:
            self.start_pondering()
        return AIMove(action, self.game.action_name(action), analysis)

    # ------------------------------------------------------------- pondering
    def start_pondering(self) -> bool:
        """Search the current position (the opponent to move) in a background thread until the
        session is asked to think, undo or start again, or ``PONDER_SIMULATIONS`` are done; the
        next search continues from the subtree of the move the opponent plays. False where there is
        nothing to ponder (a player without a search, the game over)."""
        self.stop_pondering()
        if not isinstance(self.player, SearchPlayer) or self.is_over:
            return False
        self._pondering = Pondering(self.player, self.state, list(self.actions), self.pondered)
        return True

    def stop_pondering(self) -> None:
        """Stop the pondering search, if one runs, and wait for it (at most one batch of leaves)."""
        if self._pondering is not None:
            pondering, self._pondering = self._pondering, None
            pondering.stop()

    # -------------------------------------------------------------- display
    def board_text(self, color: bool = False, cell_ids: bool = False) -> str:
        """The terminal picture with a status line (``position_line``: the ply is the number of moves
        played, as in ``to_json``); the last move is bracketed where there is room."""
        picture = render_state(self.env, self.state, color=color, cell_ids=cell_ids, last=self.last_action)
        return picture.rsplit("\n", 1)[0] + "\n" + position_line(summarize(self.env, self.state))

    def book_view(self):
        """The opening book at the current position (``book.lookup.BookView``), None out of the book."""
        if self.book is None or self.is_over:
            return None
        return self.book.view(self.state)

    def to_json(self) -> dict[str, Any]:
        """The position for a page: plain JSON types only (owners are 0, 1 or null)."""
        facts = summarize(self.env, self.state)
        last = self.last_action
        view = self.book_view()
        return {
            "book": None if view is None else view.to_json(),
            "game": self.game.spec,
            "board": self.game.board.name,
            "rules": self.game.rules_summary,
            "player": self.player.name,
            "moves": self.moves,
            "opening_moves": self.opening,
            "ply": self.ply,
            "to_move": self.to_move,
            "winner": self.winner,
            "is_over": self.is_over,
            "hole_names": list(self.game.board.hole_names),
            "hole_owners": facts["hole_owners"],
            "cell_owners": facts["cell_owners"],
            "legal_moves": self.legal_moves(),
            "swap_legal": self.swap_legal,
            "last_move": None if last is None else self.game.action_name(last),
            "undoable": self.undoable,
        }
