"""Crown's rules as kernels (../shared/RULES-crown.md): one function per rule, and the
whole match (`play_crown`) over the tables' record (`sim.rules.crown`) and the match's
stream (`sim.world.rng.Purpose.CROWN`).

Board state is two (MAX_ZONES,) int64 arrays: `owner` (SIDE_A, SIDE_B or EMPTY) and
`tokens` (0 for an empty zone). A wave's players are indexed 0..P-1, side A's first
(team_size[0] of them), then side B's. Every value comes from the record `tb`; every
random number from keyed draws of the stream (L7), so the plain reference in
tests/reference/crown.py, fed the same stream, plays the same match.
"""

from __future__ import annotations

import numpy as np

from sim.jit import njit
from sim.rules.crown import (
    AC_ATTACKS,
    AC_CYCLE,
    AC_SURGE,
    AC_WINS,
    ATTACK,
    BOOSTER,
    BY_MAJORITIES,
    BY_POINTS,
    BY_ZONES,
    CF_KIND,
    CF_REPLY_GAIN,
    CF_REPLY_ZONE,
    CF_VALUE,
    CF_ZONE,
    CLAIM,
    CROWN_SKILL_RANDOM,
    DEFENDER,
    DRAW,
    DRAW_AI_TIE,
    DRAW_ORDER_TIE,
    DRAW_RANDOM_ORDER,
    DRAW_ROLL,
    EF_A,
    EF_B,
    EF_KIND,
    EF_PLAYER,
    EF_ROUND,
    EF_WAVE,
    EF_ZONE,
    EMPTY,
    EV_ATTACK,
    EV_ERUPTION,
    EV_FAULT,
    EV_ORDER,
    EV_ROLL,
    EV_ROUND_SCORE,
    FACE_TOUCHES,
    MAX_CANDIDATES,
    MAX_PLAYERS,
    MAX_REGIONS,
    MAX_TOKENS,
    MAX_ZONE_TOUCHES,
    MAX_ZONES,
    N_CANDIDATE_FIELDS,
    N_FACES,
    N_NEXT_WAVE_ROWS,
    N_SCORE_TERMS,
    N_SIDES,
    NO_WINNER,
    NW_BEST,
    NW_CROWN,
    NW_LEAD,
    PASS,
    PERCENT,
    REINFORCE,
    RISK_SCALE,
    RS_DECIDED_BY,
    RS_FAULT_LEADER,
    RS_MAJ_A,
    RS_MAJ_B,
    RS_N_EVENTS,
    RS_WINNER,
    RS_ZONES_A,
    RS_ZONES_B,
    SIDE_A,
    SIDE_B,
    TERM_CAPTURE,
    TERM_JOINED,
    TERM_LAST_EXTRA,
    TERM_MAJORITIES,
    TERM_ZONES,
    WILDCARD,
    WORK_SIZE,
)
from sim.world.rng import draw_key, keyed_below


# ---------------------------------------------------------------- the Core (K02, K03, L3)
@njit
def lead_on(tb, widgets: np.ndarray, face: np.int64) -> np.int64:
    """K03, L3: the lead of `face` (0-based) of a Core with `widgets` (N_FACES,) on its
    faces: its widget, or for a Wildcard the type of tb.becomes it touches most (the
    first of them on a tie), or WILDCARD when it touches none of them."""
    widget = widgets[face]
    if widget != WILDCARD:
        return widget
    best = np.int64(WILDCARD)
    best_n = np.int64(0)
    for k in range(tb.becomes.shape[0]):
        kind = tb.becomes[k]
        if kind == EMPTY:
            break
        n = np.int64(0)
        for j in range(FACE_TOUCHES):
            if widgets[tb.face_touch[face, j]] == kind:
                n += 1
        if n > best_n:
            best, best_n = kind, n
    return best


@njit
def crown_on(tb, widgets: np.ndarray, face: np.int64) -> np.int64:
    """K02: the Crown of `face` on top of a Core with `widgets` (N_FACES,): the top
    widget's power × power_multiplier (a Wildcard keeps its own power, K03),
    + booster_bonus per touching Booster, + same_type_bonus per touching widget of the
    lead's type (a touching Wildcard only when touching_wildcard_counts, L3; a lead
    left a Wildcard gets none)."""
    lead = lead_on(tb, widgets, face)
    crown = tb.power[widgets[face]] * tb.power_multiplier
    for j in range(FACE_TOUCHES):
        widget = widgets[tb.face_touch[face, j]]
        if widget == BOOSTER:
            crown += tb.booster_bonus
        if lead != WILDCARD and (widget == lead or (widget == WILDCARD
                                                    and tb.touching_wildcard_counts)):
            crown += tb.same_type_bonus
    return crown


@njit
def lead_of(tb, face: np.int64) -> np.int64:
    """K03, L3: the lead of `face` (0-based) of the common Core (L2: tb.face_widget)."""
    return lead_on(tb, tb.face_widget, face)


@njit
def crown_of(tb, face: np.int64) -> np.int64:
    """K02: the Crown of `face` on top of the common Core (L2: tb.face_widget)."""
    return crown_on(tb, tb.face_widget, face)


@njit
def roll_face(stream: np.uint64, turn: np.int64, player: np.int64) -> np.int64:
    """K01, L1, L7: the face (0-based) `player` rolls in wave `turn` (round × waves +
    wave): uniform over the 12 faces, keyed by (stream, turn, DRAW_ROLL, player)."""
    return keyed_below(draw_key(stream, turn, np.int64(DRAW_ROLL), player), np.int64(N_FACES))


@njit
def wave_order(stream: np.uint64, turn: np.int64, crown: np.ndarray, n_players: np.int64,
               order: np.ndarray, tie: np.ndarray) -> None:
    """K05: `order[:n_players]` = the players strongest Crown first; equal Crowns in the
    order of a keyed draw each (DRAW_ORDER_TIE; larger first), then by index.
    crown: (P,) int64; order: (MAX_PLAYERS,) int64, written; tie: (MAX_PLAYERS,)
    uint64 scratch."""
    for p in range(n_players):
        tie[p] = draw_key(stream, turn, np.int64(DRAW_ORDER_TIE), np.int64(p))
        order[p] = p
    for i in range(1, n_players):  # insertion sort: at most 8 players
        p = order[i]
        j = i - 1
        while j >= 0:
            q = order[j]
            if crown[q] > crown[p] or (crown[q] == crown[p] and (
                    tie[q] > tie[p] or (tie[q] == tie[p] and q < p))):
                break
            order[j + 1] = q
            j -= 1
        order[j + 1] = p


# ---------------------------------------------------------------- orders (K06)
@njit
def touches_land(tb, owner: np.ndarray, side: np.int64, zone: np.int64) -> bool:
    """K06: does `zone` touch a zone `side` holds?"""
    for j in range(MAX_ZONE_TOUCHES):
        other = tb.zone_touch[zone, j]
        if other == EMPTY:
            break
        if owner[other] == side:
            return True
    return False


@njit
def has_land(tb, owner: np.ndarray, side: np.int64) -> bool:
    """Does `side` hold any zone?"""
    for z in range(tb.n_zones):
        if owner[z] == side:
            return True
    return False


@njit
def order_on(tb, owner: np.ndarray, tokens: np.ndarray, side: np.int64,
             zone: np.int64, landed: bool) -> np.int64:
    """K06: the order `side` can give on `zone` (CLAIM, REINFORCE, ATTACK), or PASS when
    it can give none there. `landed`: does the side hold any zone (a side without land
    may claim its own empty home zone, when tb.home_claim_without_land)."""
    holder = owner[zone]
    if holder == EMPTY:
        if touches_land(tb, owner, side, zone):
            return np.int64(CLAIM)
        if not landed and tb.home_claim_without_land and zone == tb.home[side]:
            return np.int64(CLAIM)
        return np.int64(PASS)
    if holder == side:
        return np.int64(REINFORCE) if tokens[zone] < tb.max_tokens else np.int64(PASS)
    return np.int64(ATTACK) if touches_land(tb, owner, side, zone) else np.int64(PASS)


# ---------------------------------------------------------------- attack (K07, K08, K09)
@njit
def capture_points_held(tb, owner: np.ndarray, side: np.int64) -> np.int64:
    """K07: capture points `side` holds."""
    n = np.int64(0)
    for z in range(tb.n_zones):
        if owner[z] == side and tb.zone_capture[z] > 0:
            n += 1
    return n


@njit
def attack_total(tb, crown: np.int64, lead: np.int64, surge_n: np.int64,
                 defender_lead: np.int64, capture_points: np.int64) -> np.int64:
    """K07: Crown + surge_bonus × teammates already in the region this wave + cycle_bonus
    when the lead beats the defender's + capture_point_bonus × capture points held."""
    total = crown + tb.surge_bonus * surge_n + tb.capture_point_bonus * capture_points
    if tb.beats[lead, defender_lead]:
        total += tb.cycle_bonus
    return total


@njit
def defence_total(tb, best_crown: np.int64, best_lead: np.int64,
                  zone_tokens: np.int64) -> np.int64:
    """K08: the defending side's best Crown this wave + token_bonus per token on the
    zone + defender_lead_bonus when that best-Crown player leads as a Defender."""
    total = best_crown + tb.token_bonus * zone_tokens
    if best_lead == DEFENDER:
        total += tb.defender_lead_bonus
    return total


@njit
def resolve_attack(tb, owner: np.ndarray, tokens: np.ndarray, side: np.int64,
                   zone: np.int64, attack: np.int64, defence: np.int64) -> bool:
    """K09: the higher total wins; a win removes the defender's tokens and places
    tb.attack_places of the attacker's; a loss or a tie changes nothing."""
    if attack > defence:
        owner[zone] = side
        tokens[zone] = tb.attack_places
        return True
    return False


# ---------------------------------------------------------------- scoring (K10, K13)
@njit
def region_counts(tb, owner: np.ndarray, side: np.int64, counts: np.ndarray) -> np.int64:
    """Zones `side` holds in each region (counts: (MAX_REGIONS,), written); returns the
    zones it holds."""
    counts[:] = 0
    held = np.int64(0)
    for z in range(tb.n_zones):
        if owner[z] == side:
            counts[tb.zone_region[z]] += 1
            held += 1
    return held


@njit
def majorities_of(tb, owner: np.ndarray, side: np.int64, counts: np.ndarray) -> np.int64:
    """K10, K13: regions where `side` holds tb.majority_zones or more zones.
    counts: (MAX_REGIONS,) int64 scratch."""
    region_counts(tb, owner, side, counts)
    n = np.int64(0)
    for r in range(tb.n_regions):
        if counts[r] >= tb.majority_zones:
            n += 1
    return n


@njit
def land_joined(tb, owner: np.ndarray, side: np.int64, held: np.int64, seen: np.ndarray,
                stack: np.ndarray) -> bool:
    """K10: does all of `side`'s land (held zones, >= 1) form one joined area?
    seen, stack: (MAX_ZONES,) int64 scratch."""
    seen[:] = 0
    top = np.int64(0)
    for z in range(tb.n_zones):
        if owner[z] == side:
            stack[0] = z
            seen[z] = 1
            top = np.int64(1)
            break
    reached = np.int64(0)
    while top > 0:
        top -= 1
        z = stack[top]
        reached += 1
        for j in range(MAX_ZONE_TOUCHES):
            other = tb.zone_touch[z, j]
            if other == EMPTY:
                break
            if owner[other] == side and not seen[other]:
                seen[other] = 1
                stack[top] = other
                top += 1
    return reached == held


@njit
def side_score(tb, owner: np.ndarray, side: np.int64, terms: np.ndarray,
               work: np.ndarray) -> np.int64:
    """K10: `side`'s points for a round scored on this board: per_zone per zone held,
    its capture points' values, majority_bonus per region held by a majority, and
    joined_bonus when all its land is one joined area spanning joined_regions or more
    regions. terms: (N_SCORE_TERMS,) int64, the four K10 terms written (TERM_LAST_EXTRA
    left 0). work: (WORK_SIZE,) int64 scratch (kernels allocate once a match: a
    match scores a board a few thousand times)."""
    counts = work[:MAX_REGIONS]
    held = region_counts(tb, owner, side, counts)
    terms[:] = 0
    terms[TERM_ZONES] = held * tb.per_zone
    for z in range(tb.n_zones):
        if owner[z] == side:
            terms[TERM_CAPTURE] += tb.zone_capture[z]
    spanned = np.int64(0)
    for r in range(tb.n_regions):
        if counts[r] >= tb.majority_zones:
            terms[TERM_MAJORITIES] += tb.majority_bonus
        if counts[r] > 0:
            spanned += 1
    if held > 0 and spanned >= tb.joined_regions and land_joined(
            tb, owner, side, held, work[MAX_REGIONS:MAX_REGIONS + MAX_ZONES],
            work[MAX_REGIONS + MAX_ZONES:]):
        terms[TERM_JOINED] = tb.joined_bonus
    return terms[TERM_ZONES] + terms[TERM_CAPTURE] + terms[TERM_MAJORITIES] + terms[TERM_JOINED]


@njit
def score_difference(tb, owner: np.ndarray, side: np.int64, terms: np.ndarray,
                     work: np.ndarray) -> np.int64:
    """K10: `side`'s round points less the other side's, on this board (terms, work:
    side_score's scratch)."""
    mine = side_score(tb, owner, side, terms, work)
    return mine - side_score(tb, owner, 1 - side, terms, work)


@njit
def decide(totals: np.ndarray, zones: np.ndarray, majorities: np.ndarray,
           result: np.ndarray) -> None:
    """K13: most points wins; tied, most zones held; then most region majorities; then a
    draw. Writes result[RS_WINNER] (a side or NO_WINNER) and result[RS_DECIDED_BY]."""
    if totals[SIDE_A] != totals[SIDE_B]:
        result[RS_WINNER] = SIDE_A if totals[SIDE_A] > totals[SIDE_B] else SIDE_B
        result[RS_DECIDED_BY] = BY_POINTS
    elif zones[SIDE_A] != zones[SIDE_B]:
        result[RS_WINNER] = SIDE_A if zones[SIDE_A] > zones[SIDE_B] else SIDE_B
        result[RS_DECIDED_BY] = BY_ZONES
    elif majorities[SIDE_A] != majorities[SIDE_B]:
        result[RS_WINNER] = SIDE_A if majorities[SIDE_A] > majorities[SIDE_B] else SIDE_B
        result[RS_DECIDED_BY] = BY_MAJORITIES
    else:
        result[RS_WINNER] = NO_WINNER
        result[RS_DECIDED_BY] = DRAW


# ---------------------------------------------------------------- the AI (K14)
@njit
def teams_best_at(face_crown: np.ndarray, n: np.int64, f: np.int64) -> np.int64:
    """How many of the 12^n rolls of a team of n players have face f as the team's best
    (the highest Crown; equal Crowns, the lower face: the roll K08's defence takes),
    every roll uniform over the faces (L1): every player rolls a face ranked at or
    below f, at least one exactly f. face_crown: (N_FACES,) of crown_of."""
    below = np.int64(0)
    for g in range(N_FACES):
        if face_crown[g] < face_crown[f] or (face_crown[g] == face_crown[f] and g >= f):
            below += 1
    at_most = np.int64(1)
    under = np.int64(1)
    for _ in range(n):
        at_most *= below
        under *= below - 1
    return at_most - under


@njit
def next_wave_risk(tb, face_crown: np.ndarray, face_lead: np.ndarray, risk: np.ndarray) -> None:
    """Skill 1's view of the next wave: risk[side, t] = the chance (in RISK_SCALE parts)
    that one enemy player's Crown beats a zone of `side` with t tokens defended by the
    best Crown of `side`'s team_size[side] players (K08, its Defender bonus counted),
    every roll uniform over the faces (L1). Exact: counted over the 12^(n+1) rolls.
    face_crown, face_lead: (N_FACES,) of crown_of, lead_of; risk: (N_SIDES,
    MAX_TOKENS + 1), written."""
    for side in range(N_SIDES):
        n = tb.team_size[side]
        rolls = np.int64(1)
        for _ in range(n):
            rolls *= N_FACES
        for t in range(MAX_TOKENS + 1):
            wins = np.int64(0)
            # the defence's best roll: faces with a higher Crown (or equal and earlier)
            # come before it; count the teams whose best is face f (teams_best_at)
            for f in range(N_FACES):
                teams = teams_best_at(face_crown, n, np.int64(f))
                defence = defence_total(tb, face_crown[f], face_lead[f], np.int64(t))
                for e in range(N_FACES):
                    if face_crown[e] > defence:
                        wins += teams
            risk[side, t] = wins * RISK_SCALE // (rolls * N_FACES)


@njit
def side_threat(tb, owner: np.ndarray, tokens: np.ndarray, side: np.int64,
                risk: np.ndarray) -> np.int64:
    """Skill 1: points (× RISK_SCALE) `side` expects to lose next wave: for each of its
    zones the enemy can attack (touching enemy land), the zone's worth to both sides,
    2 × (per_zone + its capture value), times risk[side, its tokens]."""
    total = np.int64(0)
    for z in range(tb.n_zones):
        if owner[z] == side and touches_land(tb, owner, 1 - side, z):
            worth = np.int64(2) * (tb.per_zone + tb.zone_capture[z])
            total += worth * risk[side, tokens[z]]
    return total


@njit
def next_wave_rolls(tb, face_crown: np.ndarray, face_lead: np.ndarray,
                    next_wave: np.ndarray) -> None:
    """Skill 1's view of the next wave's rolls (every roll uniform over the faces,
    L1): next_wave[NW_CROWN], [NW_LEAD] = each face's Crown and lead (K02, K03), and
    next_wave[NW_BEST + side, f] = how many of the 12^n rolls of `side`'s n players
    have face f as the team's best (the highest Crown; equal Crowns, the lower face),
    the roll K08's defence takes. next_wave: (N_NEXT_WAVE_ROWS, N_FACES), written."""
    next_wave[NW_CROWN, :] = face_crown
    next_wave[NW_LEAD, :] = face_lead
    for side in range(N_SIDES):
        n = tb.team_size[side]
        for f in range(N_FACES):
            next_wave[NW_BEST + side, f] = teams_best_at(face_crown, n, np.int64(f))


@njit
def enemy_reply(tb, owner: np.ndarray, tokens: np.ndarray, side: np.int64,
                next_wave: np.ndarray, rival: np.int64, crown: np.ndarray, lead: np.ndarray,
                surge: np.ndarray, best_crown: np.ndarray, best_lead: np.ndarray,
                terms: np.ndarray, work: np.ndarray, candidates: np.ndarray) -> np.int64:
    """Skill 1: the points (× RISK_SCALE) `side` expects to lose to the enemy's next
    order on this board. The enemy gives the order of best immediate gain (K14's skill
    0: a claim, or an attack its roll wins, K07–K09); its gain is `side`'s loss of
    round-score difference (K10). `rival`: the enemy player still to act this wave
    first in the order (its Crown and lead known, crown, lead (MAX_PLAYERS,); its
    side's Surge this wave, surge (N_SIDES, MAX_REGIONS); the defence the wave's best
    roll of `side`, best_crown, best_lead (N_SIDES,)), or EMPTY: the next wave's, one
    enemy roll uniform over the faces against the best roll of `side`'s team
    (next_wave, next_wave_rolls), no Surge. candidates: choose_order's scratch; its
    CF_REPLY_GAIN and CF_REPLY_ZONE rows are written."""
    enemy = 1 - side
    landed = has_land(tb, owner, enemy)
    base = score_difference(tb, owner, enemy, terms, work)
    gains, where = candidates[CF_REPLY_GAIN], candidates[CF_REPLY_ZONE]
    best_claim = np.int64(0)  # a pass or a reinforce gains nothing
    n = np.int64(0)
    for z in range(tb.n_zones):
        kind = order_on(tb, owner, tokens, enemy, np.int64(z), landed)
        if kind == CLAIM:
            best_claim = max(best_claim, order_gain(tb, owner, tokens, enemy, kind,
                                                    np.int64(z), True, base, terms, work))
        elif kind == ATTACK:
            gain = order_gain(tb, owner, tokens, enemy, kind, np.int64(z), True, base,
                              terms, work)
            if gain > 0:
                gains[n], where[n] = gain, z
                n += 1
    cp = capture_points_held(tb, owner, enemy)
    if rival != EMPTY:  # this wave: every roll known
        best = best_claim
        for i in range(n):
            z = where[i]
            attack = attack_total(tb, crown[rival], lead[rival],
                                  surge[enemy, tb.zone_region[z]], best_lead[side], cp)
            if gains[i] > best and attack > defence_total(tb, best_crown[side],
                                                          best_lead[side], tokens[z]):
                best = gains[i]
        return best * RISK_SCALE
    total = np.int64(0)
    rolls = np.int64(0)
    for f in range(N_FACES):  # the defending team's best roll
        weight = next_wave[NW_BEST + side, f]
        rolls += weight * N_FACES
        if weight == 0:
            continue
        for e in range(N_FACES):  # the enemy player's roll
            attack = attack_total(tb, next_wave[NW_CROWN, e], next_wave[NW_LEAD, e],
                                  np.int64(0), next_wave[NW_LEAD, f], cp)
            best = best_claim
            for i in range(n):
                if gains[i] > best and attack > defence_total(
                        tb, next_wave[NW_CROWN, f], next_wave[NW_LEAD, f], tokens[where[i]]):
                    best = gains[i]
            total += weight * best
    return total * RISK_SCALE // rolls


@njit
def order_gain(tb, owner: np.ndarray, tokens: np.ndarray, side: np.int64, kind: np.int64,
               zone: np.int64, wins: bool, base: np.int64, terms: np.ndarray,
               work: np.ndarray) -> np.int64:
    """K14: the immediate gain of an order: the change of the round's score difference
    (K10) if the round were scored right after it; `base` the difference now. A
    reinforce, a lost attack and a pass gain 0."""
    if kind == CLAIM or (kind == ATTACK and wins):
        was_owner, was_tokens = owner[zone], tokens[zone]
        owner[zone], tokens[zone] = side, np.int64(1)
        gain = score_difference(tb, owner, side, terms, work) - base
        owner[zone], tokens[zone] = was_owner, was_tokens
        return gain
    return np.int64(0)


@njit
def random_order(tb, stream: np.uint64, turn: np.int64, player: np.int64, side: np.int64,
                 owner: np.ndarray, tokens: np.ndarray, chosen: np.ndarray) -> None:
    """The random AI level (CROWN_SKILL_RANDOM, the ladder's floor): one of the legal
    orders of K06, the pass included, drawn uniformly by the keyed draw
    DRAW_RANDOM_ORDER (L7). chosen: (2,) int64 written with (order kind, zone; EMPTY
    for a pass)."""
    landed = has_land(tb, owner, side)
    n = np.int64(1)  # the pass
    for z in range(tb.n_zones):
        if order_on(tb, owner, tokens, side, np.int64(z), landed) != PASS:
            n += 1
    pick = keyed_below(draw_key(stream, turn, np.int64(DRAW_RANDOM_ORDER), player), n)
    chosen[0], chosen[1] = PASS, EMPTY
    for z in range(tb.n_zones):
        kind = order_on(tb, owner, tokens, side, np.int64(z), landed)
        if kind == PASS:
            continue
        if pick == 0:
            chosen[0], chosen[1] = kind, z
            return
        pick -= 1


@njit
def choose_order(tb, stream: np.uint64, turn: np.int64, player: np.int64, side: np.int64,
                 skill: np.int64, owner: np.ndarray, tokens: np.ndarray,
                 crown: np.ndarray, lead: np.ndarray, player_side: np.ndarray,
                 order: np.ndarray, place: np.int64, n_players: np.int64,
                 surge: np.ndarray, best_crown: np.ndarray, best_lead: np.ndarray,
                 risk: np.ndarray, next_wave: np.ndarray, chosen: np.ndarray,
                 terms: np.ndarray, work: np.ndarray, surge_value: np.ndarray,
                 candidates: np.ndarray) -> None:
    """K14: `player`'s order. Skill 0: the legal order of best immediate gain
    (order_gain). Skill 1 adds, in points × PERCENT × RISK_SCALE: ai.surge_pct % of
    the gain the Surge of an order in a region gives the teammates still to act this
    wave (their best winning attack there with one more Surge, less without), and
    ai.threat_pct % of the next wave's expected loss it avoids (side_threat), less
    ai.reply_pct % of the enemy's expected best reply on the board it leaves
    (enemy_reply; next_wave: (N_NEXT_WAVE_ROWS, N_FACES), next_wave_rolls). Passes
    only when no order is legal; equal values are settled by a keyed draw
    (DRAW_AI_TIE). chosen: (2,) int64 written with (order kind, zone; EMPTY for a
    pass). terms, work: side_score's scratch; surge_value (MAX_REGIONS,) and candidates
    (N_CANDIDATE_FIELDS, MAX_CANDIDATES) int64 scratch. At CROWN_SKILL_RANDOM:
    random_order's draw."""
    if skill == CROWN_SKILL_RANDOM:
        random_order(tb, stream, turn, player, side, owner, tokens, chosen)
        return
    enemy = 1 - side
    landed = has_land(tb, owner, side)
    base = score_difference(tb, owner, side, terms, work)
    cp = capture_points_held(tb, owner, side)
    scale = np.int64(PERCENT) * RISK_SCALE
    # skill 1: what the Surge of one more order in each region is worth to teammates
    surge_value[:] = 0
    threat_now = np.int64(0)
    rival = np.int64(EMPTY)  # the enemy player still to act this wave first in order
    for later in range(place + 1, n_players):
        if player_side[order[later]] == enemy:
            rival = order[later]
            break
    if skill >= 1:
        threat_now = side_threat(tb, owner, tokens, side, risk)
        for r in range(tb.n_regions):
            for later in range(place + 1, n_players):
                q = order[later]
                if player_side[q] != side:
                    continue
                best_without = np.int64(0)
                best_with = np.int64(0)
                for z in range(tb.n_zones):
                    if tb.zone_region[z] != r or owner[z] != enemy or \
                            not touches_land(tb, owner, side, z):
                        continue
                    defence = defence_total(tb, best_crown[enemy], best_lead[enemy], tokens[z])
                    gain = order_gain(tb, owner, tokens, side, np.int64(ATTACK), np.int64(z),
                                      True, base, terms, work)
                    without = attack_total(tb, crown[q], lead[q], surge[side, r],
                                           best_lead[enemy], cp)
                    if without > defence and gain > best_without:
                        best_without = gain
                    if without + tb.surge_bonus > defence and gain > best_with:
                        best_with = gain
                surge_value[r] += best_with - best_without
    kinds, zones, values = candidates[CF_KIND], candidates[CF_ZONE], candidates[CF_VALUE]
    n = np.int64(0)
    for z in range(tb.n_zones):
        kind = order_on(tb, owner, tokens, side, np.int64(z), landed)
        if kind == PASS:
            continue
        wins = False
        if kind == ATTACK:
            attack = attack_total(tb, crown[player], lead[player], surge[side, tb.zone_region[z]],
                                  best_lead[enemy], cp)
            wins = attack > defence_total(tb, best_crown[enemy], best_lead[enemy], tokens[z])
        value = order_gain(tb, owner, tokens, side, kind, np.int64(z), wins, base, terms,
                           work) * scale
        if skill >= 1:
            value += tb.surge_pct * surge_value[tb.zone_region[z]] * RISK_SCALE
            was_owner, was_tokens = owner[z], tokens[z]
            if kind == REINFORCE:
                tokens[z] += 1
            elif kind == CLAIM or wins:
                owner[z], tokens[z] = side, tb.attack_places if kind == ATTACK else np.int64(1)
            avoided = threat_now - side_threat(tb, owner, tokens, side, risk)
            reply = enemy_reply(tb, owner, tokens, side, next_wave, rival, crown, lead,
                                surge, best_crown, best_lead, terms, work,
                                candidates) if tb.reply_pct > 0 else np.int64(0)
            follow = enemy_reply(tb, owner, tokens, enemy, next_wave, np.int64(EMPTY), crown,
                                 lead, surge, best_crown, best_lead, terms, work,
                                 candidates) if tb.follow_pct > 0 else np.int64(0)
            owner[z], tokens[z] = was_owner, was_tokens
            value += tb.threat_pct * avoided - tb.reply_pct * reply + tb.follow_pct * follow
        kinds[n], zones[n], values[n] = kind, z, value
        n += 1
    if n == 0:
        chosen[0], chosen[1] = PASS, EMPTY
        return
    best = values[0]
    for i in range(1, n):
        best = max(best, values[i])
    ties = np.int64(0)
    for i in range(n):
        if values[i] == best:
            ties += 1
    pick = keyed_below(draw_key(stream, turn, np.int64(DRAW_AI_TIE), player), ties)
    for i in range(n):
        if values[i] == best:
            if pick == 0:
                chosen[0], chosen[1] = kinds[i], zones[i]
                return
            pick -= 1


# ---------------------------------------------------------------- the match
@njit
def log_crown_event(events: np.ndarray, n: np.int64, kind: np.int64, rnd: np.int64,
                    wave: np.int64, player: np.int64, zone: np.int64, a: np.int64,
                    b: np.int64) -> np.int64:
    """Append one event row (EVENT_FIELDS) when events has room; the new count."""
    if n < events.shape[0]:
        events[n, EF_KIND], events[n, EF_ROUND], events[n, EF_WAVE] = kind, rnd, wave
        events[n, EF_PLAYER], events[n, EF_ZONE], events[n, EF_A], events[n, EF_B] = \
            player, zone, a, b
    return n + 1


@njit
def play_crown(tb, stream: np.uint64, side_skill: np.ndarray, owner: np.ndarray,
               tokens: np.ndarray, events: np.ndarray, totals: np.ndarray,
               terms: np.ndarray, round_rows: np.ndarray, attack_counts: np.ndarray,
               lead_counts: np.ndarray, first_counts: np.ndarray,
               result: np.ndarray) -> None:
    """A whole match (K04–K13) from the board given (owner, tokens: (MAX_ZONES,) int64,
    updated in place). Each round: tb.waves waves (every player rolls, K01–K03; acts
    in Crown order, K05, by its side's skill, K14: side_skill (N_SIDES,)); then the
    eruption in the last round (L6); scoring (K10, the last round × last_round_multiplier,
    K11); the fault after round tb.fault_round (L6, K12). Outputs, all written:
    events (E, N_EVENT_FIELDS) the first E events; totals (N_SIDES,);
    terms (N_SIDES, N_SCORE_TERMS) points by term over the match; round_rows
    (rounds, N_ROUND_FIELDS); attack_counts (N_SIDES, N_WIDGETS, ATTACK_COUNTS) by the
    attacker's lead; lead_counts (N_SIDES, N_WIDGETS) rolls by lead; first_counts
    (N_SIDES,) waves the side's player acted first; result (N_RESULT_FIELDS,) K13's
    decision, final zones and majorities, the leader after the fault round (EMPTY:
    none or level), the events logged."""
    n_players = tb.team_size[SIDE_A] + tb.team_size[SIDE_B]
    player_side = np.empty(MAX_PLAYERS, dtype=np.int64)
    for p in range(n_players):
        player_side[p] = SIDE_A if p < tb.team_size[SIDE_A] else SIDE_B
    face_crown = np.empty(N_FACES, dtype=np.int64)
    face_lead = np.empty(N_FACES, dtype=np.int64)
    for f in range(N_FACES):
        face_crown[f] = crown_of(tb, np.int64(f))
        face_lead[f] = lead_of(tb, np.int64(f))
    # L2: each player's own Core (tb.player_face_widget: the common one unless a table
    # gives the player another); skill 1's view of rolls still to come (risk,
    # next_wave) takes the common Core's
    player_crown = np.empty((MAX_PLAYERS, N_FACES), dtype=np.int64)
    player_lead = np.empty((MAX_PLAYERS, N_FACES), dtype=np.int64)
    for p in range(n_players):
        for f in range(N_FACES):
            player_crown[p, f] = crown_on(tb, tb.player_face_widget[p], np.int64(f))
            player_lead[p, f] = lead_on(tb, tb.player_face_widget[p], np.int64(f))
    risk = np.zeros((N_SIDES, MAX_TOKENS + 1), dtype=np.int64)
    next_wave = np.zeros((N_NEXT_WAVE_ROWS, N_FACES), dtype=np.int64)
    if side_skill[SIDE_A] >= 1 or side_skill[SIDE_B] >= 1:
        next_wave_risk(tb, face_crown, face_lead, risk)
        next_wave_rolls(tb, face_crown, face_lead, next_wave)
    crown = np.zeros(MAX_PLAYERS, dtype=np.int64)
    lead = np.zeros(MAX_PLAYERS, dtype=np.int64)
    order = np.zeros(MAX_PLAYERS, dtype=np.int64)
    tie = np.zeros(MAX_PLAYERS, dtype=np.uint64)
    surge = np.zeros((N_SIDES, MAX_REGIONS), dtype=np.int64)
    best_crown = np.zeros(N_SIDES, dtype=np.int64)
    best_lead = np.zeros(N_SIDES, dtype=np.int64)
    chosen = np.zeros(2, dtype=np.int64)
    round_terms = np.zeros(N_SCORE_TERMS, dtype=np.int64)
    scratch_terms = np.zeros(N_SCORE_TERMS, dtype=np.int64)
    work = np.zeros(WORK_SIZE, dtype=np.int64)
    surge_value = np.zeros(MAX_REGIONS, dtype=np.int64)
    candidates = np.zeros((N_CANDIDATE_FIELDS, MAX_CANDIDATES), dtype=np.int64)
    totals[:] = 0
    terms[:] = 0
    attack_counts[:] = 0
    lead_counts[:] = 0
    first_counts[:] = 0
    result[:] = 0
    result[RS_FAULT_LEADER] = EMPTY
    n_events = np.int64(0)
    for rnd in range(tb.rounds):
        last = rnd == tb.rounds - 1
        for wave in range(tb.waves):
            turn = np.int64(rnd * tb.waves + wave)
            for p in range(n_players):
                face = roll_face(stream, turn, np.int64(p))
                crown[p] = player_crown[p, face]
                lead[p] = player_lead[p, face]
                lead_counts[player_side[p], lead[p]] += 1
                n_events = log_crown_event(events, n_events, np.int64(EV_ROLL), np.int64(rnd),
                                           np.int64(wave), np.int64(p), face, crown[p], lead[p])
            wave_order(stream, turn, crown, n_players, order, tie)
            first_counts[player_side[order[0]]] += 1
            # K08, L5: each side's best Crown of the wave; on equal Crowns, the player
            # first in the wave's order (K05 already drew their ties) is "that player"
            best_crown[:] = -1
            for i in range(n_players):
                q = order[i]
                if crown[q] > best_crown[player_side[q]]:
                    best_crown[player_side[q]] = crown[q]
                    best_lead[player_side[q]] = lead[q]
            surge[:] = 0
            for place in range(n_players):
                p = order[place]
                side = player_side[p]
                choose_order(tb, stream, turn, np.int64(p), side, side_skill[side], owner,
                             tokens, crown, lead, player_side, order, np.int64(place),
                             n_players, surge, best_crown, best_lead, risk, next_wave, chosen,
                             scratch_terms, work, surge_value, candidates)
                kind, zone = chosen[0], chosen[1]
                n_events = log_crown_event(events, n_events, np.int64(EV_ORDER), np.int64(rnd),
                                           np.int64(wave), np.int64(p), zone, kind,
                                           np.int64(place))
                if kind == PASS:
                    continue
                region = tb.zone_region[zone]
                if kind == CLAIM:
                    owner[zone], tokens[zone] = side, np.int64(1)
                elif kind == REINFORCE:
                    tokens[zone] += 1
                else:
                    enemy = 1 - side
                    cp = capture_points_held(tb, owner, side)
                    attack = attack_total(tb, crown[p], lead[p], surge[side, region],
                                          best_lead[enemy], cp)
                    defence = defence_total(tb, best_crown[enemy], best_lead[enemy],
                                            tokens[zone])
                    won = resolve_attack(tb, owner, tokens, side, zone, attack, defence)
                    counts = attack_counts[side, lead[p]]
                    counts[AC_ATTACKS] += 1
                    if won:
                        counts[AC_WINS] += 1
                        if attack - tb.surge_bonus * surge[side, region] <= defence:
                            counts[AC_SURGE] += 1
                        if tb.beats[lead[p], best_lead[enemy]] and \
                                attack - tb.cycle_bonus <= defence:
                            counts[AC_CYCLE] += 1
                    n_events = log_crown_event(events, n_events, np.int64(EV_ATTACK),
                                               np.int64(rnd), np.int64(wave), np.int64(p),
                                               zone, attack, defence)
                # L5: a claim, reinforce or attack order acts in the zone's region
                surge[side, region] += 1
        if last and tb.fault_round > 0:
            n_events = fault_loss(tb, owner, tokens, tb.eruption_tokens, events, n_events,
                              np.int64(EV_ERUPTION), np.int64(rnd))
        multiplier = tb.last_round_multiplier if last else np.int64(1)
        for side in range(N_SIDES):
            points = side_score(tb, owner, np.int64(side), round_terms, work)
            for k in range(N_SCORE_TERMS):
                terms[side, k] += round_terms[k]
            terms[side, TERM_LAST_EXTRA] += points * (multiplier - 1)
            points *= multiplier
            totals[side] += points
            round_rows[rnd, side] = points
            round_rows[rnd, N_SIDES + side] = totals[side]
            held = np.int64(0)
            for z in range(tb.n_zones):
                if owner[z] == side:
                    held += 1
            round_rows[rnd, 2 * N_SIDES + side] = held
            n_events = log_crown_event(events, n_events, np.int64(EV_ROUND_SCORE),
                                       np.int64(rnd), np.int64(-1), np.int64(side),
                                       np.int64(EMPTY), points, totals[side])
        if rnd + 1 == tb.fault_round:
            if totals[SIDE_A] != totals[SIDE_B]:
                result[RS_FAULT_LEADER] = SIDE_A if totals[SIDE_A] > totals[SIDE_B] else SIDE_B
            if not last:
                n_events = fault_loss(tb, owner, tokens, tb.fault_tokens, events, n_events,
                                  np.int64(EV_FAULT), np.int64(rnd))
    zones = np.zeros(N_SIDES, dtype=np.int64)
    majorities = np.zeros(N_SIDES, dtype=np.int64)
    for side in range(N_SIDES):
        for z in range(tb.n_zones):
            if owner[z] == side:
                zones[side] += 1
        majorities[side] = majorities_of(tb, owner, np.int64(side), work[:MAX_REGIONS])
    decide(totals, zones, majorities, result)
    result[RS_ZONES_A], result[RS_ZONES_B] = zones[SIDE_A], zones[SIDE_B]
    result[RS_MAJ_A], result[RS_MAJ_B] = majorities[SIDE_A], majorities[SIDE_B]
    result[RS_N_EVENTS] = n_events


@njit
def fault_loss(tb, owner: np.ndarray, tokens: np.ndarray, n: np.int64, events: np.ndarray,
           n_events: np.int64, kind: np.int64, rnd: np.int64) -> np.int64:
    """L6, K12: the fault's or the eruption's loss of `n` tokens on every fault zone,
    each zone that lost any logged (a = tokens lost, b = tokens left)."""
    for z in range(tb.n_zones):
        if tb.zone_fault[z] and owner[z] != EMPTY:
            before = tokens[z]
            remove_tokens_one(owner, tokens, np.int64(z), n)
            if before != tokens[z]:
                n_events = log_crown_event(events, n_events, kind, rnd, np.int64(-1),
                                           np.int64(EMPTY), np.int64(z), before - tokens[z],
                                           tokens[z])
    return n_events


@njit
def remove_tokens_one(owner: np.ndarray, tokens: np.ndarray, zone: np.int64,
                      n: np.int64) -> None:
    """L6: `n` tokens off `zone`; a zone left with none is empty."""
    tokens[zone] = max(tokens[zone] - n, np.int64(0))
    if tokens[zone] == 0:
        owner[zone] = EMPTY
