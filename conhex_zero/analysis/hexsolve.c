/* Exact Hex solver with H-search virtual connections and depth-first proof-number search.
 *
 * Built at first use by conhex_zero/analysis/native_solver.py (the system C compiler, no Python
 * headers: plain functions called through ctypes). Boards up to 8 x 8: a position is two 64-bit
 * bitboards, bit r * n + c = hole id, as in games/hex.py and analysis/solver.py.
 *
 * H-search (Anshelevich 2002, as in Hayward et al., "Solving 7x7 Hex", 2003): for one player, the
 * nodes are its two sides (with the stones touching them), its other stone groups and the empty
 * cells. A full connection (FC) between two nodes holds whoever moves; a semi connection (SC) holds
 * with one move of its owner (its key). Each has a carrier: the empty cells it needs. Rules:
 *   base: two adjacent nodes, one an empty cell: FC with the empty carrier;
 *   AND over an owned node g (a group or a side): FC(x,g,A) + FC(g,z,B), A and B disjoint and
 *       missing x and z: FC(x,z,A|B); SC(x,g,A) + FC(g,z,B): SC(x,z,A|B);
 *   AND over an empty cell y: FC(x,y,A) + FC(y,z,B): SC(x,z,A|B|y) (key y);
 *   OR: SCs between x and z whose carriers have an empty intersection: FC with their union.
 * Carriers that contain another of the same pair are dropped; each pair keeps a bounded list
 * (fc_limit, sc_limit; the OR rule combines at most or_depth), and between two empty cells only
 * carriers of at most cell_carrier_max cells are kept (2 by default: bridges and their semi
 * connections; four times faster on 7 x 7 than no limit). Every derived connection is sound, so
 * the solver's verdicts are exact; the limits only make H-search miss some.
 *
 * The solver is negamax depth-first proof-number search (Nagai 2002) on "does the mover win?",
 * with a transposition table and the 1+epsilon trick; children are listed centre first (ties in
 * the proof numbers go to the centre). A position is evaluated once, when first seen:
 *   the mover has an FC or an SC between its sides: it wins (proof: the carrier);
 *   the opponent has an FC: the mover loses (proof: the carrier);
 *   the opponent has SCs: the mover must play in the intersection of their carriers (the
 *   must-play region; proof of a loss includes their union).
 * Proof sets (as in analysis/solver.py): empty holes such that the winner still wins when the loser
 * owns every other empty hole. A move x refuted with proof S_x means every move outside S_x + {x}
 * loses too (monotonicity), so the candidates shrink to S_x.
 * Before a position is looked up or evaluated, inferior cells are filled in (fill_in: cells of no
 * use to one player get the other's stone, captured pairs their captor's); the table holds filled
 * positions, and a filled child's proof set gets the fills of its winner's colour back. The search
 * stops at a node budget, a deadline or a stop request from another thread (hs_stop).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef uint64_t u64;

#define MAXNODES 72
#define FCMAX 10
#define SCMAX 16
#define ORDEPTH 4
static int fc_limit = FCMAX, sc_limit = SCMAX, or_depth = ORDEPTH;

/* ---- board ------------------------------------------------------------------------------- */
static int N;                 /* holes */
static u64 FULL;
static u64 NB[64];            /* neighbours of each hole */
static u64 SIDES[2][2];       /* [player][side] holes of the side */
static int ORDER[64];         /* holes, centre first: the order children are listed (ties go to the first) */

/* ---- H-search state (one player at a time) --------------------------------------------- */
static int K;                          /* nodes */
static int owned[MAXNODES];            /* 1: a side or a group of the player, 0: an empty cell */
static u64 cellbit[MAXNODES];          /* the empty cell of a cell node, 0 for owned nodes */
static u64 adjc[MAXNODES];             /* empty cells next to the node */
static u64 fcs[MAXNODES][MAXNODES][FCMAX];
static uint8_t nfc[MAXNODES][MAXNODES];
static u64 scs[MAXNODES][MAXNODES][SCMAX];
static uint8_t nsc[MAXNODES][MAXNODES];
/* partners: for each node, the nodes it has a full (fpart) or semi (spart) connection with, so the
 * AND rule visits only those (a semi list emptied later stays listed: an empty list costs nothing) */
static uint8_t fpart[MAXNODES][MAXNODES], nfpart[MAXNODES];
static uint8_t spart[MAXNODES][MAXNODES], nspart[MAXNODES];
static uint8_t sc_listed[MAXNODES][MAXNODES];

typedef struct { uint8_t x, z, full; u64 c; } Item;
#define QMAX 65536
static Item queue[QMAX];
static int qhead, qtail;
static long hs_ops;
static long hs_budget = 400000;   /* combination steps one H-search may take */

static int subset(u64 a, u64 b) { return (a & ~b) == 0; }

static void push(int x, int z, int full, u64 c) {
    if (qtail < QMAX) { queue[qtail].x = x; queue[qtail].z = z; queue[qtail].full = full; queue[qtail].c = c; qtail++; }
}

static int cell_carrier_max = 2;   /* between two empty cells, only carriers of at most this many cells (-1: any) */

static int add_fc(int x, int z, u64 c) {
    if (x == z) return 0;
    if (cell_carrier_max >= 0 && !owned[x] && !owned[z] && __builtin_popcountll(c) > cell_carrier_max) return 0;
    if (x > z) { int t = x; x = z; z = t; }
    u64 *l = fcs[x][z];
    int n = nfc[x][z];
    for (int i = 0; i < n; i++) if (subset(l[i], c)) return 0;
    int m = 0;
    for (int i = 0; i < n; i++) if (!subset(c, l[i])) l[m++] = l[i];
    if (m >= fc_limit) { nfc[x][z] = m; return 0; }
    l[m++] = c;
    nfc[x][z] = m;
    if (n == 0) { fpart[x][nfpart[x]++] = (uint8_t)z; fpart[z][nfpart[z]++] = (uint8_t)x; }
    /* semi connections that contain a full one are no longer needed */
    u64 *s = scs[x][z];
    int k = 0;
    for (int i = 0; i < nsc[x][z]; i++) if (!subset(c, s[i])) s[k++] = s[i];
    nsc[x][z] = k;
    push(x, z, 1, c);
    return 1;
}

static int or_rule(int x, int z, const u64 *l, int n, int start, u64 inter, u64 uni, int depth) {
    for (int i = start; i < n; i++) {
        u64 in2 = inter & l[i];
        if (in2 == inter) continue;
        u64 un2 = uni | l[i];
        if (!in2) { add_fc(x, z, un2); return 1; }
        if (depth < or_depth && or_rule(x, z, l, n, i + 1, in2, un2, depth + 1)) return 1;
    }
    return 0;
}

static int add_sc(int x, int z, u64 c) {
    if (x == z) return 0;
    if (cell_carrier_max >= 0 && !owned[x] && !owned[z] && __builtin_popcountll(c) > cell_carrier_max) return 0;
    if (x > z) { int t = x; x = z; z = t; }
    for (int i = 0; i < nfc[x][z]; i++) if (subset(fcs[x][z][i], c)) return 0;
    u64 *l = scs[x][z];
    int n = nsc[x][z];
    for (int i = 0; i < n; i++) if (subset(l[i], c)) return 0;
    int m = 0;
    for (int i = 0; i < n; i++) if (!subset(c, l[i])) l[m++] = l[i];
    if (m >= sc_limit) { nsc[x][z] = m; return 0; }
    l[m++] = c;
    nsc[x][z] = m;
    if (!sc_listed[x][z]) {
        sc_listed[x][z] = 1;
        spart[x][nspart[x]++] = (uint8_t)z; spart[z][nspart[z]++] = (uint8_t)x;
    }
    push(x, z, 0, c);
    /* OR: the new carrier with others of the pair, until the intersection is empty */
    u64 copy[SCMAX];
    memcpy(copy, l, sizeof(u64) * m);
    or_rule(x, z, copy, m - 1, 0, c, c, 1);
    return 1;
}

/* carrier c between x and the middle g, combined with the middle's connections to every z */
static void and_from(int x, int g, int xfull, u64 c) {
    for (int j = 0; j < nfpart[g]; j++) {
        int z = fpart[g][j];
        if (z == x) continue;
        if (c & cellbit[z]) continue;
        int a = g < z ? g : z, b = g < z ? z : g;
        int nf = nfc[a][b];
        if (!nf) continue;
        u64 *l = fcs[a][b];
        for (int i = 0; i < nf; i++) {
            u64 d = l[i];
            if (++hs_ops > hs_budget) return;
            if ((d & c) || (d & cellbit[x])) continue;
            if (owned[g]) {
                if (xfull) add_fc(x, z, c | d); else add_sc(x, z, c | d);
            } else if (xfull) {
                add_sc(x, z, c | d | cellbit[g]);
            }
        }
    }
}

static int node_of_cell[64];

/* H-search for `player` owning `mine` against `theirs`. Returns the number of nodes; nodes 0 and 1
 * are the player's two sides. */
static int hsearch(u64 mine, u64 theirs, int player) {
    u64 empty = FULL & ~(mine | theirs);
    u64 sa = SIDES[player][0], sb = SIDES[player][1];
    /* groups */
    u64 groups[64]; int ng = 0;
    u64 rest = mine;
    while (rest) {
        u64 g = rest & -rest;
        for (;;) {
            u64 grown = g;
            u64 m = g;
            while (m) { int i = __builtin_ctzll(m); m &= m - 1; grown |= NB[i] & mine; }
            if (grown == g) break;
            g = grown;
        }
        rest &= ~g;
        groups[ng++] = g;
    }
    K = 2;
    u64 members[MAXNODES];
    members[0] = 0; members[1] = 0;
    adjc[0] = sa & empty; adjc[1] = sb & empty;
    for (int i = 0; i < ng; i++) {
        u64 g = groups[i];
        u64 nb = 0, m = g;
        while (m) { int j = __builtin_ctzll(m); m &= m - 1; nb |= NB[j]; }
        nb &= empty;
        int ta = (g & sa) != 0, tb = (g & sb) != 0;
        if (ta && tb) return -1;   /* connected already */
        if (ta) { members[0] |= g; adjc[0] |= nb; }
        else if (tb) { members[1] |= g; adjc[1] |= nb; }
        else { members[K] = g; adjc[K] = nb; owned[K] = 1; cellbit[K] = 0; K++; }
    }
    owned[0] = owned[1] = 1; cellbit[0] = cellbit[1] = 0;
    u64 m = empty;
    while (m) {
        int i = __builtin_ctzll(m); m &= m - 1;
        node_of_cell[i] = K;
        owned[K] = 0; cellbit[K] = 1ULL << i; adjc[K] = NB[i] & empty; K++;
    }
    for (int a = 0; a < K; a++) {
        for (int b = a; b < K; b++) { nfc[a][b] = 0; nsc[a][b] = 0; sc_listed[a][b] = 0; }
        nfpart[a] = 0; nspart[a] = 0;
    }
    qhead = qtail = 0; hs_ops = 0;
    /* base: every node with its adjacent empty cells */
    for (int x = 0; x < K; x++) {
        u64 a = adjc[x];
        while (a) {
            int i = __builtin_ctzll(a); a &= a - 1;
            int y = node_of_cell[i];
            if (owned[x] || x < y) add_fc(x, y, 0);
        }
    }
    while (qhead < qtail && hs_ops <= hs_budget) {
        Item it = queue[qhead++];
        int x = it.x, z = it.z;
        /* is the item still in its list? (a later, smaller carrier may have dropped it) */
        int alive = 0;
        if (it.full) { for (int i = 0; i < nfc[x][z]; i++) if (fcs[x][z][i] == it.c) { alive = 1; break; } }
        else { for (int i = 0; i < nsc[x][z]; i++) if (scs[x][z][i] == it.c) { alive = 1; break; } }
        if (!alive) continue;
        /* z as the middle, x the end; then x as the middle */
        if (it.full || owned[z]) and_from(x, z, it.full, it.c);
        if (it.full || owned[x]) and_from(z, x, it.full, it.c);
        /* an FC into an owned node also extends the semi connections that end at it */
        if (it.full) {
            for (int side = 0; side < 2; side++) {
                int g = side ? x : z, e = side ? z : x;   /* g the owned middle, e the far end */
                if (!owned[g]) continue;
                for (int j = 0; j < nspart[g]; j++) {
                    int y = spart[g][j];
                    if (y == e || (it.c & cellbit[y])) continue;
                    int a = g < y ? g : y, b = g < y ? y : g;
                    for (int i = 0; i < nsc[a][b]; i++) {
                        u64 s = scs[a][b][i];
                        if (++hs_ops > hs_budget) break;
                        if ((s & it.c) || (s & cellbit[e])) continue;
                        add_sc(y, e, s | it.c);
                    }
                }
            }
        }
    }
    return K;
}

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

/* ---- evaluation of one position ------------------------------------------------------------- */
enum { UNKNOWN = 0, WIN = 1, LOSS = 2 };

typedef struct { int status; u64 proof; u64 must; u64 must_proof; } Eval;

static long evaluations;

static Eval evaluate(u64 mine, u64 theirs, int player) {
    Eval e = {UNKNOWN, 0, 0, 0};
    u64 empty = FULL & ~(mine | theirs);
    evaluations++;
    /* fill-in can join a player's sides: the mover's join first (its must-play region would be empty) */
    if (joined(mine, player)) { e.status = WIN; return e; }
    if (hsearch(theirs, mine, 1 - player) < 0) { e.status = LOSS; return e; }
    if (nfc[0][1]) { e.status = LOSS; e.proof = fcs[0][1][0]; return e; }
    u64 must = empty, must_proof = 0;
    for (int i = 0; i < nsc[0][1]; i++) { must &= scs[0][1][i]; must_proof |= scs[0][1][i]; }
    if (!must) { e.status = LOSS; e.proof = must_proof; return e; }
    int k = hsearch(mine, theirs, player);
    if (k < 0) { e.status = WIN; return e; }
    if (nfc[0][1]) { e.status = WIN; e.proof = fcs[0][1][0]; return e; }
    if (nsc[0][1]) { e.status = WIN; e.proof = scs[0][1][0]; return e; }
    e.must = must; e.must_proof = must_proof;
    return e;
}

/* ---- transposition table ------------------------------------------------------------------- */
typedef struct {
    u64 a, b;           /* the mover's stones, the opponent's */
    u64 proof;          /* solved: the proof set; else the evaluation's must-play proof */
    u64 must;           /* must-play region (unsolved) */
    uint32_t pn, dn;    /* proof numbers for "the mover wins" */
    uint32_t work;
    uint8_t player, used;
} Entry;

#define INF 100000000u
static Entry *table;
static u64 table_mask;
static long nodes_searched, node_limit;
static int out_of_budget;

static u64 hash(u64 a, u64 b, int p) {
    u64 h = a * 0x9E3779B97F4A7C15ULL ^ (b + 0x632BE59BD9B4E019ULL) * 0xC2B2AE3D27D4EB4FULL ^ (u64)p * 0x165667B19E3779F9ULL;
    h ^= h >> 29; h *= 0xBF58476D1CE4E5B9ULL; h ^= h >> 32;
    return h;
}

static Entry *lookup(u64 a, u64 b, int p) {
    u64 h = hash(a, b, p) & table_mask;
    for (int k = 0; k < 4; k++) {
        Entry *e = &table[(h + k) & table_mask];
        if (e->used && e->a == a && e->b == b && e->player == p) return e;
    }
    return NULL;
}

static Entry *store(u64 a, u64 b, int p) {
    u64 h = hash(a, b, p) & table_mask;
    Entry *victim = NULL;
    for (int k = 0; k < 4; k++) {
        Entry *e = &table[(h + k) & table_mask];
        if (!e->used || (e->a == a && e->b == b && e->player == p)) { victim = e; break; }
        int solved = e->pn == 0 || e->dn == 0;
        if (!victim) victim = e;
        else {
            int vs = victim->pn == 0 || victim->dn == 0;
            /* replace unsolved before solved, then the least work */
            if ((vs && !solved) || (vs == solved && e->work < victim->work)) victim = e;
        }
    }
    if (!(victim->used && victim->a == a && victim->b == b && victim->player == p)) {
        memset(victim, 0, sizeof *victim);
        victim->a = a; victim->b = b; victim->player = p; victim->used = 1;
    }
    return victim;
}

/* The entry of a position, evaluated (H-search) when first seen. */
static Entry *probe(u64 a, u64 b, int p) {
    Entry *e = lookup(a, b, p);
    if (e) return e;
    Eval v = evaluate(a, b, p);
    e = store(a, b, p);
    if (v.status == WIN) { e->pn = 0; e->dn = INF; e->proof = v.proof; }
    else if (v.status == LOSS) { e->pn = INF; e->dn = 0; e->proof = v.proof; }
    else {
        e->must = v.must; e->proof = v.must_proof;
        e->pn = 1; e->dn = (uint32_t)__builtin_popcountll(v.must);
    }
    return e;
}

#define MAXMOVES 64

static void mid(u64 a, u64 b, int p, uint32_t thpn, uint32_t thdn);

/* One move's child, filled in: the child's mover (the opponent) holds ca, its opponent cb; add_cm and
 * add_co the cells fill-in gave each (added to a proof of the child by whoever wins it). */
typedef struct { u64 ca, cb, add_cm, add_co; } Child;

static Child child_of(u64 a, u64 b, int p, u64 bit) {
    Child c;
    c.ca = b; c.cb = a | bit;
    fill_in(&c.ca, &c.cb, 1 - p, &c.add_cm, &c.add_co);
    return c;
}

/* The children of an unsolved node: moves in its must-play region, shrunk by the proof sets of
 * moves already refuted. Returns the count; fills moves[] and kids[]. Sets *won when a child is a
 * loss for its mover (with *win_proof), and the accumulated loss proof in *loss_proof. Proofs of
 * the filled children are translated back: the fills of the child's winner join them. */
static int children(u64 a, u64 b, int p, u64 must, u64 *moves, Child *kids, uint32_t *cpn, uint32_t *cdn,
                    int *won, u64 *win_proof, u64 *loss_proof) {
    int n = 0;
    *won = 0;
    u64 cand = must;
    u64 lp = *loss_proof;
    Child filled[64];   /* per hole: the filled child (valid where `known`) */
    u64 known = 0;
    /* first pass: solved children shrink the region */
    u64 m = must;
    while (m) {
        int i = __builtin_ctzll(m); m &= m - 1;
        u64 bit = 1ULL << i;
        if (!(cand & bit)) continue;
        Child k = child_of(a, b, p, bit);
        filled[i] = k; known |= bit;
        Entry *c = lookup(k.ca, k.cb, 1 - p);
        if (!c) continue;
        if (c->dn == 0) { *won = 1; *win_proof = c->proof | k.add_co | bit; return 0; }
        if (c->pn == 0) { u64 s = c->proof | k.add_cm; lp |= s; cand &= s; }
    }
    for (int j = 0; j < N; j++) {
        int i = ORDER[j];
        u64 bit = 1ULL << i;
        if (!(cand & bit)) continue;
        Child k = (known & bit) ? filled[i] : child_of(a, b, p, bit);
        Entry *c = probe(k.ca, k.cb, 1 - p);
        if (c->dn == 0) { *won = 1; *win_proof = c->proof | k.add_co | bit; return 0; }
        if (c->pn == 0) { u64 s = c->proof | k.add_cm; lp |= s; cand &= s; continue; }
        moves[n] = bit; kids[n] = k; cpn[n] = c->pn; cdn[n] = c->dn; n++;
    }
    /* drop moves a later refutation excluded */
    int k = 0;
    for (int i = 0; i < n; i++)
        if (cand & moves[i]) { moves[k] = moves[i]; kids[k] = kids[i]; cpn[k] = cpn[i]; cdn[k] = cdn[i]; k++; }
    *loss_proof = lp;
    return k;
}

static double deadline;            /* CLOCK_MONOTONIC seconds; 0: none */
static volatile int stop_requested;

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void mid(u64 a, u64 b, int p, uint32_t thpn, uint32_t thdn) {
    Entry *e = probe(a, b, p);
    if (e->pn == 0 || e->dn == 0) return;
    if (out_of_budget) return;
    u64 moves[MAXMOVES]; Child kids[MAXMOVES]; uint32_t cpn[MAXMOVES], cdn[MAXMOVES];
    u64 must = e->must, base_proof = e->proof;
    uint32_t work0 = (uint32_t)nodes_searched;
    for (;;) {
        if (++nodes_searched > node_limit) { out_of_budget = 1; break; }
        if ((nodes_searched & 63) == 0 && (stop_requested || (deadline > 0 && now_seconds() > deadline))) {
            out_of_budget = 1; break;
        }
        int won; u64 win_proof = 0, loss_proof = base_proof;
        int n = children(a, b, p, must, moves, kids, cpn, cdn, &won, &win_proof, &loss_proof);
        e = probe(a, b, p);   /* the table may have moved it */
        if (won) { e->pn = 0; e->dn = INF; e->proof = win_proof; break; }
        if (n == 0) { e->pn = INF; e->dn = 0; e->proof = loss_proof; break; }
        uint32_t pn = INF, dn = 0, dn2 = INF;
        int best = 0;
        for (int i = 0; i < n; i++) {
            if (cdn[i] < pn) { dn2 = pn; pn = cdn[i]; best = i; }
            else if (cdn[i] < dn2) dn2 = cdn[i];
            dn += cpn[i]; if (dn > INF) dn = INF;
        }
        e->pn = pn; e->dn = dn;
        if (pn >= thpn || dn >= thdn) break;
        /* the 1+epsilon trick (Pawlewicz and Lew 2007): stay in the best child until its
         * disproof number passes the second best's by a quarter, not by one */
        uint64_t grace = (uint64_t)dn2 + dn2 / 4 + 1;
        uint32_t cthdn = thpn < grace ? thpn : (uint32_t)grace;
        uint64_t t = (uint64_t)thdn - dn + cpn[best];
        uint32_t cthpn = t > INF ? INF : (uint32_t)t;
        mid(kids[best].ca, kids[best].cb, 1 - p, cthpn, cthdn);
        if (out_of_budget) { e = probe(a, b, p); break; }
    }
    e = lookup(a, b, p);
    if (e) e->work += (uint32_t)nodes_searched - work0;
}

/* ---- interface --------------------------------------------------------------------------- */

int hs_init(int holes, const u64 *neighbours, const u64 *sides, int log2_table) {
    if (holes < 1 || holes > 64) return -1;
    N = holes;
    FULL = holes == 64 ? ~0ULL : ((1ULL << holes) - 1);
    for (int i = 0; i < holes; i++) NB[i] = neighbours[i];
    for (int p = 0; p < 2; p++) for (int s = 0; s < 2; s++) SIDES[p][s] = sides[2 * p + s];
    int n = 1;
    while (n * n < holes) n++;
    double centre = (n - 1) / 2.0;
    for (int i = 0; i < holes; i++) ORDER[i] = i;
    for (int i = 1; i < holes; i++) {   /* insertion sort by distance from the centre, then id */
        int h = ORDER[i], j = i - 1;
        double dh = __builtin_fabs(h % n - centre) + __builtin_fabs(h / n - centre);
        while (j >= 0) {
            int g = ORDER[j];
            double dg = __builtin_fabs(g % n - centre) + __builtin_fabs(g / n - centre);
            if (dg <= dh) break;
            ORDER[j + 1] = g; j--;
        }
        ORDER[j + 1] = h;
    }
    free(table);
    table = calloc((size_t)1 << log2_table, sizeof(Entry));
    if (!table) return -2;
    table_mask = ((u64)1 << log2_table) - 1;
    return 0;
}

void hs_clear(void) { memset(table, 0, sizeof(Entry) * (table_mask + 1)); }

/* Does the mover (player p, stones a) win against stones b? 1 yes, 0 no, -1 budget, time or stop.
 * *proof receives the proof set. max_nodes bounds the node expansions of this call, max_seconds
 * (> 0) its time; hs_stop(1) from another thread ends it at the next check (every 64 expansions;
 * the caller clears the request with hs_stop(0) before the call). */
int hs_solve(u64 a, u64 b, int p, long max_nodes, double max_seconds, u64 *proof, long *spent) {
    nodes_searched = 0; node_limit = max_nodes; out_of_budget = 0;
    deadline = max_seconds > 0 ? now_seconds() + max_seconds : 0;
    u64 add_a, add_b;
    fill_in(&a, &b, p, &add_a, &add_b);
    Entry *e = probe(a, b, p);
    while (e->pn && e->dn && !out_of_budget) {
        mid(a, b, p, INF - 1, INF - 1);
        e = lookup(a, b, p);
        if (!e) e = probe(a, b, p);
    }
    if (spent) *spent = nodes_searched;
    e = lookup(a, b, p);
    if (!e || (e->pn && e->dn)) return -1;
    if (proof) *proof = e->proof | (e->pn == 0 ? add_a : add_b);
    return e->pn == 0 ? 1 : 0;
}

void hs_stop(int on) { stop_requested = on; }
void hs_set_fill(int on) { fill_enabled = on; }
long hs_fill_cells(void) { return fill_cells; }

/* The position after fill-in: the mover's stones in *a, the opponent's in *b (updated in place). */
void hs_fill(u64 *a, u64 *b, int p) {
    u64 add_a, add_b;
    fill_in(a, b, p, &add_a, &add_b);
}

/* The player's H-search result: 2 an FC between its sides, 1 an SC, 0 neither; carrier in *c. */
int hs_connection(u64 mine, u64 theirs, int player, u64 *c) {
    int k = hsearch(mine, theirs, player);
    if (k < 0) { *c = 0; return 2; }
    if (nfc[0][1]) { *c = fcs[0][1][0]; return 2; }
    if (nsc[0][1]) { *c = scs[0][1][0]; return 1; }
    return 0;
}

long hs_evaluations(void) { return evaluations; }
void hs_set_budget(long ops) { hs_budget = ops; }
void hs_set_cell_carriers(int most) { cell_carrier_max = most; }
void hs_set_limits(int fc, int sc, int depth) {
    fc_limit = fc < 1 ? 1 : fc > FCMAX ? FCMAX : fc;
    sc_limit = sc < 1 ? 1 : sc > SCMAX ? SCMAX : sc;
    or_depth = depth < 1 ? 1 : depth;
}
long hs_last_ops(void) { return hs_ops; }
