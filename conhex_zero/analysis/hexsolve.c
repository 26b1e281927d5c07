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
 *   AND over an owned node g (a group; a side only when through_sides is set, hsearch.h): FC(x,g,A)
 *       + FC(g,z,B), A and B disjoint and missing x and z: FC(x,z,A|B); SC(x,g,A) + FC(g,z,B): SC(x,z,A|B);
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
 * positions, and a filled child's proof set gets the fills of its winner's colour back. Vulnerable
 * moves (made useless by one reply, hexfill.h) are left out; a loss found without them gets their
 * killers in its proof set. So are dominated moves (every neighbour another kept move's or that move,
 * hexfill.h), a loss found without them keeping their dominators in its proof set. The search stops
 * at a node budget, a deadline or a stop request from another thread (hs_stop); hs_export and
 * hs_import carry a search's table into a later run.
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

#include "hsearch.h"   /* H-search: virtual connections */
#include "hexfill.h"   /* inferior cells: fill-in */

/* ---- evaluation of one position ------------------------------------------------------------- */
enum { UNKNOWN = 0, WIN = 1, LOSS = 2 };

typedef struct { int status; u64 proof; u64 must; u64 must_proof; int live; u64 moves; } Eval;

static long evaluations;

static Eval evaluate(u64 mine, u64 theirs, int player) {
    Eval e = {UNKNOWN, 0, 0, 0, 0, 0};
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
    /* every move in the region vulnerable: lost (hexfill.h, vulnerable_moves) */
    u64 killer[64];
    u64 v = vulnerable_moves(mine, theirs, player, must, killer);
    if (!(must & ~v)) {
        /* the proof must keep the mover's sides apart: an opponent's semi connection does; without
         * one, the whole empty region (prune_proof) */
        e.status = LOSS; e.proof = must_proof ? prune_proof(must_proof, v, killer) : empty;
        return e;
    }
    e.must = must; e.must_proof = must_proof; e.live = __builtin_popcountll(must & ~v); e.moves = must & ~v;
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

/* hs_verdicts' cache (below) */
typedef struct { u64 a, b, moves; int8_t player, verdict, used; } Verdict;
#define VCACHE_BITS 18
static Verdict *vcache;
static long verdict_hits, verdict_calls;
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
        e->pn = 1; e->dn = (uint32_t)v.live;   /* the moves that are not vulnerable */
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
    u64 killer[64];
    u64 vul = vulnerable_moves(a, b, p, must, killer);   /* left out; their killers join a loss proof */
    u64 dominator[64];
    u64 dom = dominated_moves(a, b, p, must & ~vul, dominator);   /* left out; their dominators join a loss proof */
    u64 cand = must;
    u64 lp = *loss_proof;
    int anchored = lp != 0;   /* a semi connection's carrier or a refuted move's proof keeps the sides apart */
    Child filled[64];   /* per hole: the filled child (valid where `known`) */
    u64 known = 0;
    /* first pass: solved children shrink the region */
    u64 m = must;
    while (m) {
        int i = __builtin_ctzll(m); m &= m - 1;
        u64 bit = 1ULL << i;
        if (!(cand & bit) || (vul & bit)) continue;
        Child k = child_of(a, b, p, bit);
        filled[i] = k; known |= bit;
        Entry *c = lookup(k.ca, k.cb, 1 - p);
        if (!c) continue;
        if (c->dn == 0) { *won = 1; *win_proof = c->proof | k.add_co | bit; return 0; }
        if (c->pn == 0) { u64 s = c->proof | k.add_cm; lp |= s; cand &= s; anchored = 1; }
    }
    for (int j = 0; j < N; j++) {
        int i = ORDER[j];
        u64 bit = 1ULL << i;
        if (!(cand & bit) || (vul & bit)) continue;
        if (dom & bit) continue;
        Child k = (known & bit) ? filled[i] : child_of(a, b, p, bit);
        Entry *c = probe(k.ca, k.cb, 1 - p);
        if (c->dn == 0) { *won = 1; *win_proof = c->proof | k.add_co | bit; return 0; }
        if (c->pn == 0) { u64 s = c->proof | k.add_cm; lp |= s; cand &= s; anchored = 1; continue; }
        moves[n] = bit; kids[n] = k; cpn[n] = c->pn; cdn[n] = c->dn; n++;
    }
    /* drop moves a later refutation excluded */
    int k = 0;
    for (int i = 0; i < n; i++)
        if (cand & moves[i]) { moves[k] = moves[i]; kids[k] = kids[i]; cpn[k] = cpn[i]; cdn[k] = cdn[i]; k++; }
    pruned_moves += __builtin_popcountll(vul & cand);
    dominated_count += __builtin_popcountll(dom & cand);
    if (!k) {   /* a loss: each dominated move left in the region keeps its (refuted) dominator beside it */
        u64 m2 = dom & cand;
        while (m2) { int x = __builtin_ctzll(m2); m2 &= m2 - 1; lp |= dominator[x]; }
    }
    *loss_proof = k ? lp : anchored ? prune_proof(lp, vul & cand, killer) : (FULL & ~(a | b));
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
    if (vcache) memset(vcache, 0, sizeof(Verdict) << VCACHE_BITS);   /* another board or other settings */
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
    if (spent) *spent = nodes_searched > node_limit ? node_limit : nodes_searched;   /* the check counts one over */
    e = lookup(a, b, p);
    if (!e || (e->pn && e->dn)) return -1;
    if (proof) *proof = e->proof | (e->pn == 0 ? add_a : add_b);
    return e->pn == 0 ? 1 : 0;
}

/* ---- a search carried between runs ---------------------------------------------------------- */
/* One table entry as saved (48 bytes, host byte order): what a later run reloads to go on with a
 * search that was cut short. Solved entries are exact whatever the settings; unsolved ones carry
 * sound must-play regions and proof numbers, which only guide. */
typedef struct { u64 a, b, proof, must; uint32_t pn, dn, work; uint8_t player, pad[3]; } Saved;

int hs_saved_size(void) { return (int)sizeof(Saved); }

/* Is the entry a position below the root (mover rp with stones ra, opponent rb): both players'
 * stones there include theirs at the root? */
static int below(const Entry *e, u64 ra, u64 rb, int rp) {
    u64 x = e->player == rp ? e->a : e->b, y = e->player == rp ? e->b : e->a;
    return (x & ra) == ra && (y & rb) == rb;
}

/* The entries below the root (ra, rb, rp) that took the most work below them (solved or not), at
 * most `cap`, into out[]; returns the count. Entries are chosen by the bit length of their work: the
 * largest classes that fit. (Entries of other searches the table holds are left out.) */
long hs_export(Saved *out, long cap, u64 ra, u64 rb, int rp) {
    long classes[34] = {0};
    for (u64 i = 0; i <= table_mask; i++)
        if (table[i].used && below(&table[i], ra, rb, rp)) classes[table[i].work ? 33 - __builtin_clz(table[i].work) : 0]++;
    int from = 34;
    long taken = 0;
    while (from > 0 && taken + classes[from - 1] <= cap) taken += classes[--from];
    long n = 0;
    for (u64 i = 0; i <= table_mask && n < cap; i++) {
        Entry *e = &table[i];
        if (!e->used || !below(e, ra, rb, rp)) continue;
        int c = e->work ? 33 - __builtin_clz(e->work) : 0;
        if (c < from) continue;
        Saved *s = &out[n++];
        memset(s, 0, sizeof *s);
        s->a = e->a; s->b = e->b; s->proof = e->proof; s->must = e->must;
        s->pn = e->pn; s->dn = e->dn; s->work = e->work; s->player = e->player;
    }
    return n;
}

/* Saved entries back into the table (a solved entry already there is kept). */
void hs_import(const Saved *in, long n) {
    for (long i = 0; i < n; i++) {
        const Saved *s = &in[i];
        if ((s->a & s->b) || ((s->a | s->b) & ~FULL) || s->player > 1) continue;
        Entry *e = lookup(s->a, s->b, s->player);
        if (e && (e->pn == 0 || e->dn == 0)) continue;
        if (!e) e = store(s->a, s->b, s->player);
        e->proof = s->proof; e->must = s->must; e->pn = s->pn; e->dn = s->dn; e->work = s->work;
    }
}

/* Table slot `i` (for tests: every solved entry's value and proof set can be checked): 1 the
 * mover wins, 0 it loses, -1 unsolved or unused; the mover's stones, the opponent's, the mover and
 * the proof set in out[0..3]. */
int hs_entry(long i, u64 *out) {
    if (i < 0 || (u64)i > table_mask) return -1;
    Entry *e = &table[i];
    if (!e->used || (e->pn && e->dn)) return -1;
    out[0] = e->a; out[1] = e->b; out[2] = e->player; out[3] = e->proof;
    return e->pn == 0;
}

/* What the table knows of a position (filled in first, as the search stores it): 1 the mover wins, 0 it
 * loses, -1 not solved or not in the table. A search's table holds exact results for many positions
 * below its root; book prove writes those of the book's positions into the book. */
int hs_known(u64 a, u64 b, int p) {
    u64 add_a, add_b;
    if ((a & b) || ((a | b) & ~FULL) || p < 0 || p > 1) return -1;
    fill_in(&a, &b, p, &add_a, &add_b);
    Entry *e = lookup(a, b, p);
    if (!e || (e->pn && e->dn)) return -1;
    return e->pn == 0;
}

/* The mover's vulnerable moves among `cand` (the mask returned), with one killer each in
 * killers[hole] (for tests; fill-in is not applied first). */
u64 hs_vulnerable(u64 a, u64 b, int p, u64 cand, u64 *killers) {
    int was = prune_enabled;
    prune_enabled = 1;
    u64 v = vulnerable_moves(a, b, p, cand & FULL & ~(a | b), killers);
    prune_enabled = was;
    return v;
}

/* The mover's dominated moves among `cand` less its vulnerable ones (the mask returned), with the
 * dominator of each in dominators[hole] (for tests; fill-in is not applied first). */
u64 hs_dominated(u64 a, u64 b, int p, u64 cand, u64 *dominators) {
    int was = dominate_enabled, was_prune = prune_enabled;
    dominate_enabled = 1; prune_enabled = 1;
    u64 killer[64];
    u64 c = cand & FULL & ~(a | b);
    u64 v = vulnerable_moves(a, b, p, c, killer);
    u64 d = dominated_moves(a, b, p, c & ~v, dominators);
    dominate_enabled = was; prune_enabled = was_prune;
    return d;
}

void hs_set_dominate(int on) { dominate_enabled = on; }
long hs_dominated_count(void) { return dominated_count; }
void hs_stop(int on) { stop_requested = on; }
void hs_set_through_sides(int on) { through_sides = on; }
void hs_set_fill(int on) { fill_enabled = on; }
void hs_set_prune(int on) { prune_enabled = on; }
long hs_pruned(void) { return pruned_moves; }
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

/* Verdicts for a batch of positions, such as a tree search's new leaves: each position (the mover,
 * player[i], holds mine[i], the opponent theirs[i]) is filled in and evaluated as the solver's nodes
 * are (no search, no solver table). verdict[i]: 1 the mover wins, -1 it loses, 0 not known; moves[i]:
 * where not known, the moves worth searching (the must-play region less the vulnerable moves:
 * whenever the mover wins, one of them wins), else 0. Results are cached (a direct-mapped table of
 * 2^18 positions, cleared by hs_init, as the settings change only through it): the searches of a
 * book's neighbouring positions meet the same positions again and again. */
void hs_verdicts(long n, const u64 *mine, const u64 *theirs, const int *player, int8_t *verdict, u64 *moves) {
    if (!vcache) vcache = calloc((size_t)1 << VCACHE_BITS, sizeof(Verdict));
    for (long i = 0; i < n; i++) {
        u64 a = mine[i], b = theirs[i], add_a, add_b;
        int p = player[i];
        verdict_calls++;
        Verdict *c = vcache ? vcache + (hash(a, b, p) >> (64 - VCACHE_BITS)) : 0;
        if (c && c->used && c->a == a && c->b == b && c->player == p) {
            verdict[i] = c->verdict; moves[i] = c->moves; verdict_hits++;
            continue;
        }
        fill_in(&a, &b, p, &add_a, &add_b);
        Eval e = evaluate(a, b, p);
        verdict[i] = e.status == WIN ? 1 : e.status == LOSS ? -1 : 0;
        moves[i] = e.status == UNKNOWN ? e.moves : 0;
        if (c) { c->a = mine[i]; c->b = theirs[i]; c->player = (int8_t)p; c->verdict = verdict[i]; c->moves = moves[i]; c->used = 1; }
    }
}

/* Positions hs_verdicts was asked for, and how many of them its cache answered. */
long hs_verdict_calls(void) { return verdict_calls; }
long hs_verdict_hits(void) { return verdict_hits; }

long hs_evaluations(void) { return evaluations; }
void hs_set_budget(long ops) { hs_budget = ops; }
void hs_set_cell_carriers(int most) { cell_carrier_max = most; }
void hs_set_limits(int fc, int sc, int depth) {
    fc_limit = fc < 1 ? 1 : fc > FCMAX ? FCMAX : fc;
    sc_limit = sc < 1 ? 1 : sc > SCMAX ? SCMAX : sc;
    or_depth = depth < 1 ? 1 : depth;
}
long hs_last_ops(void) { return hs_ops; }
