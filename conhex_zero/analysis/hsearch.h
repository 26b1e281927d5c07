/* H-search for the native Hex solver: full and semi virtual connections of one player, with their
 * carriers (hexsolve.c's header says the rules). Part of hexsolve.c's one translation unit: included
 * after the board's globals (N, FULL, NB, SIDES) and the list limits. */
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

/* AND over a side as the middle (x to the side, the side to z: x to z) is off by default: such a
 * connection only ever serves a chain that the side's own connections to x or z already shortcut, and
 * combining every connection into a side with every other one was most of H-search's work (without
 * it the solver is about three times faster on Hex 7x7 openings, and H-search finds the same
 * side-to-side connections on 300 random positions). Sides are still the ends of connections. */
static int through_sides = 0;

/* carrier c between x and the middle g, combined with the middle's connections to every z */
static void and_from(int x, int g, int xfull, u64 c) {
    if (!through_sides && g < 2) return;
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
                if (!owned[g] || (!through_sides && g < 2)) continue;
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
