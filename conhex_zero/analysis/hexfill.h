/* Inferior-cell fill-in for the native Hex solver (hexsolve.c's header says how proofs use it).
 * Part of hexsolve.c's one translation unit: included after the board's globals. */
/* ---- inferior cells: fill-in ------------------------------------------------------------- */
/* A player x's "links" of an empty cell u: the nodes x could step to from u, as in H-search: empty
 * neighbours (bits of cells), x's groups beside u (the bit of the group's lowest stone; a group
 * touching one of x's sides counts as that side) and x's sides (two bits). */
static u64 link_cells[2][64];
static uint8_t link_sides[2][64];

/* Fills link_cells[slot], link_sides[slot] for player x (stones mine, opponent theirs). Returns 0,
 * or -1 when x's sides are joined already. */
static int links(u64 mine, u64 theirs, int x, int slot) {
    u64 empty = FULL & ~(mine | theirs);
    u64 m = empty;
    while (m) {
        int u = __builtin_ctzll(m); m &= m - 1;
        link_cells[slot][u] = NB[u] & empty;
        link_sides[slot][u] = (uint8_t)(((SIDES[x][0] >> u) & 1) | (((SIDES[x][1] >> u) & 1) << 1));
    }
    u64 rest = mine;
    while (rest) {
        u64 g = rest & -rest, rep = g;
        for (;;) {
            u64 grown = g, k = g;
            while (k) { int i = __builtin_ctzll(k); k &= k - 1; grown |= NB[i] & mine; }
            if (grown == g) break;
            g = grown;
        }
        rest &= ~g;
        uint8_t touch = (uint8_t)(((g & SIDES[x][0]) != 0) | (((g & SIDES[x][1]) != 0) << 1));
        if (touch == 3) return -1;
        u64 nb = 0, k = g;
        while (k) { int i = __builtin_ctzll(k); k &= k - 1; nb |= NB[i]; }
        nb &= empty;
        while (nb) {
            int u = __builtin_ctzll(nb); nb &= nb - 1;
            if (touch) link_sides[slot][u] |= touch; else link_cells[slot][u] |= rep;
        }
    }
    return 0;
}

/* Is the empty cell c of no use to the player of `slot` (with the cells of `taken` the other
 * player's)? Yes when the nodes it links (empty cells, groups, sides) are pairwise linked: every path
 * of the player through c then has a shortcut around it, so a stone of the other player on c
 * changes no game's value (and stays so after any further stones). */
static int useless(int slot, int c, u64 empty, u64 taken) {
    u64 nc = link_cells[slot][c] & ~taken;
    uint8_t ns = link_sides[slot][c];
    if (__builtin_popcountll(nc & ~empty) + __builtin_popcount(ns) > 1) return 0;
    u64 m = nc & empty;
    while (m) {
        int u = __builtin_ctzll(m); m &= m - 1;
        if ((nc & ~(1ULL << u) & ~link_cells[slot][u]) || (ns & ~link_sides[slot][u])) return 0;
    }
    return 1;
}

/* Are the player's two sides joined by its stones? */
static int joined(u64 stones, int x) {
    u64 g = stones & SIDES[x][0];
    for (;;) {
        u64 grown = g, k = g;
        while (k) { int i = __builtin_ctzll(k); k &= k - 1; grown |= NB[i] & stones; }
        if (grown == g) break;
        g = grown;
    }
    return (g & SIDES[x][1]) != 0;
}

static int fill_enabled = 1;
static long fill_cells;   /* cells filled in, over all positions */

/* Inferior-cell fill-in (Henderson, Arneson and Hayward, "Dead cell analysis in Hex and the Shannon
 * game", 2009): cells of no use to one player get the other's stone; pairs of adjacent empty cells
 * captured by a player (whichever of the two the opponent takes, the player takes the other and the
 * opponent's stone is of no use to it) get the player's stones. Each fill keeps the position's value,
 * and the conditions stay true under more stones, so a proof of the filled position with the fills
 * of its winner added (*add_a: filled for the mover, *add_b: for the opponent) proves the original.
 * The mover (player p, stones *a) and the opponent (*b) are updated in place. */
static void fill_in(u64 *a, u64 *b, int p, u64 *add_a, u64 *add_b) {
    *add_a = *add_b = 0;
    if (!fill_enabled) return;
    for (;;) {
        if (links(*a, *b, p, 0) < 0 || links(*b, *a, 1 - p, 1) < 0) return;
        u64 empty = FULL & ~(*a | *b), to_a = 0, to_b = 0;
        u64 m = empty;
        while (m) {
            int c = __builtin_ctzll(m); m &= m - 1;
            if (useless(0, c, empty, 0)) to_b |= 1ULL << c;        /* no use to the mover */
            else if (useless(1, c, empty, 0)) to_a |= 1ULL << c;   /* no use to the opponent */
        }
        if (!(to_a | to_b)) {
            /* captured pairs: {u, v} adjacent, each of no use to the one side once the other holds the partner */
            u64 done = 0;
            m = empty;
            while (m) {
                int u = __builtin_ctzll(m); m &= m - 1;
                u64 nv = NB[u] & m & ~done;
                while (nv) {
                    int v = __builtin_ctzll(nv); nv &= nv - 1;
                    u64 bu = 1ULL << u, bv = 1ULL << v;
                    if (done & bu) break;
                    if (useless(1, u, empty, bv) && useless(1, v, empty, bu)) { to_a |= bu | bv; done |= bu | bv; }
                    else if (useless(0, u, empty, bv) && useless(0, v, empty, bu)) { to_b |= bu | bv; done |= bu | bv; }
                }
            }
            if (!(to_a | to_b)) return;
        }
        *a |= to_a; *b |= to_b; *add_a |= to_a; *add_b |= to_b;
        fill_cells += __builtin_popcountll(to_a | to_b);
    }
}

/* ---- inferior moves: vulnerable cells ---------------------------------------------------- */
static int prune_enabled = 1;
static long pruned_moves;   /* candidate moves left out as vulnerable, over all expansions */

/* The mover's vulnerable moves among `cand` (player p, stones a, opponent's b; Henderson's thesis,
 * Hayward et al. 2005): x is vulnerable to the killer y, an empty neighbour of x, when x is of no
 * use to the mover once the opponent holds y. Then after x and y the position has the value it has
 * with the opponent's stone on x too (no game's winner depends on x's colour), so x gains nothing:
 * whenever the mover wins, some move that is not vulnerable wins. Proof: a winning vulnerable x
 * leaves the mover winning after the opponent's stones on x and y, with some move z that also wins
 * the original (fewer opponent stones); z is vulnerable again or not; each step adds two opponent
 * stones, so the chain ends, and only at a move that is not vulnerable. Mutual killers need no care.
 * So a node whose moves that are not vulnerable all lose is lost; its proof set must then keep each
 * vulnerable move's killer empty (the condition persists under more stones of either colour), which
 * prune_proof() adds. killer[x] receives one killer's bit for each vulnerable x. */
static u64 vulnerable_moves(u64 a, u64 b, int p, u64 cand, u64 *killer) {
    if (!prune_enabled || !cand) return 0;
    if (links(a, b, p, 0) < 0) return 0;
    u64 empty = FULL & ~(a | b), v = 0, m = cand;
    while (m) {
        int x = __builtin_ctzll(m); m &= m - 1;
        u64 ys = NB[x] & empty;
        while (ys) {
            int y = __builtin_ctzll(ys); ys &= ys - 1;
            if (useless(0, x, empty, 1ULL << y)) { v |= 1ULL << x; killer[x] = 1ULL << y; break; }
        }
    }
    return v;
}

/* A loss proof `proof` where the vulnerable moves `v` were left out: the killers of those inside the
 * proof set join it (and theirs, if a killer is itself such a move), so each stays a vulnerable
 * move in the position the proof set stands for. */
static u64 prune_proof(u64 proof, u64 v, const u64 *killer) {
    for (;;) {
        u64 add = 0, m = v & proof;
        while (m) { int x = __builtin_ctzll(m); m &= m - 1; add |= killer[x]; }
        if (!(add & ~proof)) return proof;
        proof |= add;
    }
}

/* ---- inferior moves: dominated cells ----------------------------------------------------- */
static int dominate_enabled = 1;
static long dominated_count;   /* candidate moves left out as dominated, over all expansions */

/* The mover's moves among `cand` dominated by another move of `cand` that is kept (neighbourhood
 * domination; Hayward et al. 2005, Henderson's thesis): x is dominated by y when every node x links
 * (its empty neighbours, the mover's groups beside it, the sides it is on) is y or linked by y. With
 * the mover's stone on y, every such node is in or beside y's group, so each path of the mover through
 * x has a way round x through that group: x is of no use to the mover then, and playing x is worth no
 * more than playing y (x, then y for nothing, equals y, then x for nothing). So whenever x wins, y wins.
 * The condition stays true under more stones of either colour on other cells. The moves are taken the
 * most links first (then centre first) and x is left out only for a y already kept, so every left-out
 * move has a kept dominator, which receives its bit in dominator[x]; a loss found without x must keep
 * that dominator in its proof set (children() adds it). `cand` holds no vulnerable move. */
static u64 dominated_moves(u64 a, u64 b, int p, u64 cand, u64 *dominator) {
    if (!dominate_enabled || __builtin_popcountll(cand) < 2) return 0;
    if (links(a, b, p, 0) < 0) return 0;
    int order[64], weight[64], n = 0;
    for (int j = 0; j < N; j++) {
        int x = ORDER[j];
        if (!((cand >> x) & 1)) continue;
        int w = __builtin_popcountll(link_cells[0][x]) + __builtin_popcount(link_sides[0][x]);
        int i = n++;
        while (i > 0 && weight[i - 1] < w) { order[i] = order[i - 1]; weight[i] = weight[i - 1]; i--; }
        order[i] = x; weight[i] = w;
    }
    int kept[64], nk = 0;
    u64 d = 0;
    for (int i = 0; i < n; i++) {
        int x = order[i];
        u64 lx = link_cells[0][x];
        uint8_t sx = link_sides[0][x];
        int by = -1;
        for (int j = 0; j < nk && by < 0; j++) {
            int y = kept[j];
            if (!((lx & ~(1ULL << y)) & ~link_cells[0][y]) && !(sx & ~link_sides[0][y])) by = y;
        }
        if (by >= 0) { d |= 1ULL << x; dominator[x] = 1ULL << by; }
        else kept[nk++] = x;
    }
    return d;
}
