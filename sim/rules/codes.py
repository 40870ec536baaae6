"""Every code of the workbench, written once.

Kernels, the engine, the runner, the outcome schemas, the analysis and the report
all read their integer codes and names from here. A name tuple is the source and
the integer constants unpack it, so a code and its name cannot drift apart: the
code of a name is its position in the tuple.

None of these are balance values (those live in `tables/*.toml` and reach kernels
as arguments); they are enumerations, sentinels, fixed array capacities, sizes
and units of measure.
"""

from __future__ import annotations

# ---------------------------------------------------------------- owners and sentinels
NONE = -1      # no city, no unit, empty slot, "not set" everywhere
UNSET = -2     # a cached lookup not made yet (NONE: made, and it found nothing)
NEUTRAL = -2   # city_owner of a neutral village (V06, T06)
BANDIT = -3    # unit_owner of a bandit (V06)
OWNER_NAMES = {NEUTRAL: "neutral", BANDIT: "bandit"}  # seats are named by their index
FAR = 1 << 20  # a distance or utility beyond any real one (sentinel for minima/maxima)
PATH_BLOCKED = -2  # an impassable tile in a path row while it is filled (NONE once filled)

# ---------------------------------------------------------------- capacities
MAX_SEATS = 6       # seat slots of the state record (RULES.md C: 2–6 seats)
MAX_TILES = 2791    # a board of radius 30, the largest the tables and scenarios allow
MAX_DISC_RADIUS = 5  # the per-tile disc table holds tiles within this many steps
QUEUE_SLOTS = 8     # production queue slots per city

# ---------------------------------------------------------------- the board
TERRAINS = ("plains", "forest", "hills", "mountain", "water")
PLAINS, FOREST, HILLS, MOUNTAIN, WATER = range(len(TERRAINS))
NODE_KINDS = ("food", "production", "gold")
FOOD, PRODUCTION, GOLD = range(len(NODE_KINDS))
# a city's yields: the three node kinds, then science (index 3)
YIELDS = (*NODE_KINDS, "science")
SCIENCE = YIELDS.index("science")
N_NODE_KINDS = len(NODE_KINDS)
N_YIELDS = len(YIELDS)
N_DIRECTIONS = 6  # neighbours of a hex tile; sim.world.board draws their order
# tiles within r steps of a tile on an unbounded board, 3r(r+1) + 1, for r = 0..MAX_DISC_RADIUS:
# the first DISC_SIZES[r] entries of a board's disc row are the tiles within r steps
DISC_SIZES = tuple(3 * r * (r + 1) + 1 for r in range(MAX_DISC_RADIUS + 1))
TIE_KEY_RANGE = 1 << 30  # map generation draws its random tie-break keys below this

# ---------------------------------------------------------------- units of measure
# every *_pct value of the tables is in percent of this; combat strengths are in
# percent of a point too (attack at 100 % is attack × PERCENT), so % modifiers stay exact
PERCENT = 100

# ---------------------------------------------------------------- victory (V01 order)
# V01 precedence is ascending code order: conquest beats science beats dominance ...
VICTORY_NAMES = ("conquest", "science", "dominance", "turn_limit", "human_out")
CONQUEST, SCIENCE_WIN, DOMINANCE, TURN_LIMIT, HUMAN_OUT = range(len(VICTORY_NAMES))

# ---------------------------------------------------------------- revolt causes (V11, V14)
REVOLT_CAUSES = (None, "transfer", "unrest")
REVOLT_NONE, REVOLT_TRANSFER, REVOLT_UNREST = range(len(REVOLT_CAUSES))

# ---------------------------------------------------------------- a war's front (D9, ai.diplomacy)
FRONT_FIELDS = ("a_attack_near_b", "b_defence_near_b", "b_attack_near_a", "a_defence_near_a",
                "b_units_near_a")
A_ATTACK_NEAR_B, B_DEFENCE_NEAR_B, B_ATTACK_NEAR_A, A_DEFENCE_NEAR_A, B_UNITS_NEAR_A = \
    range(len(FRONT_FIELDS))
N_FRONT = len(FRONT_FIELDS)

# ---------------------------------------------------------------- what a random draw is for
# A draw's key is (stream, turn, purpose, subject) (sim.world.rng.draw_key): a change that
# alters one draw, or how many draws a turn makes, leaves every other draw as it was
DRAW_PURPOSES = ("research", "unit", "build", "event_card", "unrest_city", "plan")
DRAW_RESEARCH, DRAW_UNIT, DRAW_BUILD, DRAW_EVENT_CARD, DRAW_UNREST_CITY, DRAW_PLAN = \
    range(len(DRAW_PURPOSES))

# ---------------------------------------------------------------- event cards (V14)
CARD_KINDS = ("nothing", "public_unrest", "gold", "food", "science")
CARD_NOTHING, CARD_PUBLIC_UNREST, CARD_GOLD, CARD_FOOD, CARD_SCIENCE = range(len(CARD_KINDS))

# ---------------------------------------------------------------- AI personality weights
PERSONALITY_WEIGHTS = ("expansion", "military", "science", "economy")
W_EXPANSION, W_MILITARY, W_SCIENCE, W_ECONOMY = range(len(PERSONALITY_WEIGHTS))

# ---------------------------------------------------------------- score terms (T13)
SCORE_TERMS = ("region", "population", "cities", "gold", "monuments")
TERM_REGION, TERM_POPULATION, TERM_CITIES, TERM_GOLD, TERM_MONUMENTS = range(len(SCORE_TERMS))
N_SCORE_TERMS = len(SCORE_TERMS)
# the counts behind the terms and the T11 tiebreak (sim.kernels.rules.territory.score_terms)
SCORE_COUNTS = ("region_tiles", "population", "cities", "gold_stock")
COUNT_REGION, COUNT_POPULATION, COUNT_CITIES, COUNT_GOLD = range(len(SCORE_COUNTS))
N_SCORE_COUNTS = len(SCORE_COUNTS)

# ---------------------------------------------------------------- the per-turn record
# turn_log[turn, seat, field]: the score terms (points), the score, the V18 counter, the
# gold stock, the cities held and the science stock, recorded after the turn's last seat
# played; then, from index TURN_FIELDS on, the seat's units alive by type
# (turn_log[turn, seat, TURN_FIELDS + unit type], one slot per unit type of the tables)
TURN_LOG_FIELDS = (*SCORE_TERMS, "score", "dominance", "gold_stock", "cities_held",
                   "science_stock")
TURN_FIELDS = len(TURN_LOG_FIELDS)
LOG_SCORE = TURN_LOG_FIELDS.index("score")
LOG_DOMINANCE = TURN_LOG_FIELDS.index("dominance")
LOG_GOLD_STOCK = TURN_LOG_FIELDS.index("gold_stock")
LOG_CITIES_HELD = TURN_LOG_FIELDS.index("cities_held")
LOG_SCIENCE_STOCK = TURN_LOG_FIELDS.index("science_stock")

# ---------------------------------------------------------------- why a unit was disbanded
# the c field of an unit_disbanded event: the disband command (D5, also the AI's) or
# a treasury that could not pay upkeep (C: Economy)
DISBAND_CAUSES = ("command", "upkeep")
DISBAND_COMMAND, DISBAND_UPKEEP = range(len(DISBAND_CAUSES))

# ---------------------------------------------------------------- the event log
# Each event is one int64 row of these fields; what a, b and c hold depends on the kind.
EVENT_COLUMNS = ("turn", "kind", "seat", "by", "city", "a", "b", "c")
EVENT_FIELDS = len(EVENT_COLUMNS)
(COL_TURN, COL_KIND, COL_SEAT, COL_BY, COL_CITY, COL_A, COL_B, COL_C) = range(EVENT_FIELDS)
# An attack row carries both damages in its c field: c = dealt + DAMAGE_SPLIT × taken,
# so dealt = c % DAMAGE_SPLIT and taken = c // DAMAGE_SPLIT (both below DAMAGE_SPLIT:
# damage is at most the tables' damage_scale, far below it).
DAMAGE_SPLIT = 1 << 20
# kind: what seat / by / city / a / b / c hold (a field not named is -1 for seat, by
# and city, 0 for a, b and c). Owners are seat indices, NEUTRAL or BANDIT.
# New kinds go at the end: a kind's code is its position, and outcome tables store names.
EVENT_KINDS = {
    "capture": "seat=old owner (-2 village), by=capturer, city, a=unit",
    "capital_fall": "seat=old owner, by=capturer, city=fallen capital, a=new capital or -1",
    "transfer": "seat=old owner, by=capturer, city, a=row of the capital_fall",
    "kept": "seat=old owner, city kept beyond the radius, a=row of the capital_fall",
    "eliminated": "seat, by, a=row of the cause event",
    "revolt_start": "seat=owner, city, a=turns, b=revolt cause code",
    "revolt_end": "seat=owner, city, b=revolt cause code",
    "observatory_queued": "seat, city",
    "observatory_lost": "seat=old owner, by, city",
    "victory": "seat=winner, a=victory code",
    "truce": "seat=buyer, by=other seat, a=turns, b=price",
    "pact": "seat=target, a=pact slot",
    "unrest": "seat, city, a=turns",
    "found": "seat, city",
    "tile_bought": "seat, city, a=tile, b=price",
    "camp_cleared": "seat, a=camp, b=gold",
    "built": "seat, city, a=item code (every completed unit or building, C: Production queue)",
    "observatory_completed": "seat, city",
    "pact_end": "seat=target, a=pact slot",
    "unit_disbanded": "seat, a=unit, b=unit type, c=disband cause code (DISBAND_CAUSES)",
    "attack": "seat=attacking side (-3 bandit), by=defending side (the target's owner: a seat, "
              "-2 village, -3 bandit), city=target city or -1, a=attacker unit type (-1 "
              "bandit), b=target unit type (-1 when the target is a city, or a bandit), "
              "c=damage dealt to the target + DAMAGE_SPLIT × damage taken by the attacker "
              "(T16: the preview's numbers, before HP is clipped at 0)",
    "rush": "seat, city, a=item code, b=gold paid (C: Production queue)",
    "research": "seat, a=tech, b=its cost in science (C: Research)",
    "repair": "seat, city, a=HP, b=gold paid (the gold repair command, C: Cities)",
    "repairs": "seat (-2 for the neutral villages), a=cities repaired, b=HP total: the "
               "turn-start repair of one seat flow (of the neutral turn), only when non-zero",
    "heals": "seat, a=units healed, b=HP total: the D3 healing of one seat flow, only when "
             "non-zero",
    "truce_declined": "seat=buyer, by=the seat asked, a=turns, b=price offered (D9: the seat "
                      "asked declined; an accepted offer is a truce row)",
}
EVENT_NAMES = tuple(EVENT_KINDS)
(EV_CAPTURE, EV_CAPITAL_FALL, EV_TRANSFER, EV_KEPT, EV_ELIMINATED, EV_REVOLT_START,
 EV_REVOLT_END, EV_OBSERVATORY_QUEUED, EV_OBSERVATORY_LOST, EV_VICTORY, EV_TRUCE, EV_PACT,
 EV_UNREST, EV_FOUND, EV_TILE_BOUGHT, EV_CAMP_CLEARED, EV_BUILT, EV_OBSERVATORY_COMPLETED,
 EV_PACT_END, EV_UNIT_DISBANDED, EV_ATTACK, EV_RUSH, EV_RESEARCH, EV_REPAIR, EV_REPAIRS,
 EV_HEALS, EV_TRUCE_DECLINED) = range(len(EVENT_NAMES))
# D9: the truces table reads what each side held this many turns after an offer (or at
# the match's end, if sooner); an outcome definition, not a balance value
TRUCE_AFTER_TURNS = 10

# ---------------------------------------------------------------- commands (SCENARIOS.md)
# scenario `do` names with a kernel command code; `play_turns` is handled in Python
COMMAND_NAMES = ("move", "attack", "enter", "found", "buy_tile", "queue", "rush", "repair",
                 "research", "truce", "end_turn", "set_seat", "disband")
(C_MOVE, C_ATTACK, C_ENTER, C_FOUND, C_BUY_TILE, C_QUEUE, C_RUSH, C_REPAIR, C_RESEARCH,
 C_TRUCE, C_END_TURN, C_SET_SEAT, C_DISBAND) = range(len(COMMAND_NAMES))

# ---------------------------------------------------------------- combat targets (T16)
TARGET_KINDS = ("none", "unit", "city")
TARGET_NONE, TARGET_UNIT, TARGET_CITY = range(len(TARGET_KINDS))

# ---------------------------------------------------------------- why a command was refused
# Kernels return these integers; the words a designer reads are in
# sim.engine.commands.REASON_TEXT (a test checks every reason has its words).
REASONS = (
    "ok", "finished", "no_unit", "not_your_unit", "no_moves", "cannot_attack",
    "out_of_range", "no_target", "attack_own", "truce", "pact", "city_at_zero", "no_city",
    "not_your_city", "city_has_hp", "not_adjacent", "not_melee", "impassable", "occupied",
    "foreign_city", "no_path", "not_settler", "too_close", "in_region", "quota", "capacity",
    "buy_neutral", "buy_in_region", "buy_not_adjacent", "no_gold", "queue_full",
    "tech_missing", "already_built", "already_queued", "one_per_empire", "settler_pop",
    "queue_empty", "not_rushable", "nothing_to_rush", "hp_range", "tech_known", "prereq",
    "no_science", "bad_seat", "seat_out", "truce_exists", "bad_item", "forbidden",
    "price_low",
)
(OK, R_FINISHED, R_NO_UNIT, R_NOT_YOUR_UNIT, R_NO_MOVES, R_CANNOT_ATTACK, R_OUT_OF_RANGE,
 R_NO_TARGET, R_ATTACK_OWN, R_TRUCE, R_PACT, R_CITY_AT_ZERO, R_NO_CITY, R_NOT_YOUR_CITY,
 R_CITY_HAS_HP, R_NOT_ADJACENT, R_NOT_MELEE, R_IMPASSABLE, R_OCCUPIED, R_FOREIGN_CITY,
 R_NO_PATH, R_NOT_SETTLER, R_TOO_CLOSE, R_IN_REGION, R_QUOTA, R_CAPACITY, R_BUY_NEUTRAL,
 R_BUY_IN_REGION, R_BUY_NOT_ADJACENT, R_NO_GOLD, R_QUEUE_FULL, R_TECH_MISSING,
 R_ALREADY_BUILT, R_ALREADY_QUEUED, R_ONE_PER_EMPIRE, R_SETTLER_POP, R_QUEUE_EMPTY,
 R_NOT_RUSHABLE, R_NOTHING_TO_RUSH, R_HP_RANGE, R_TECH_KNOWN, R_PREREQ, R_NO_SCIENCE,
 R_BAD_SEAT, R_SEAT_OUT, R_TRUCE_EXISTS, R_BAD_ITEM, R_FORBIDDEN,
 R_PRICE_LOW) = range(len(REASONS))

# ---------------------------------------------------------------- restricted play (issue 16)
# mechanics an experiment's seat_ai may forbid a seat (besides units, buildings and
# `research:<tech>`); the state holds one bit per mechanic (State.seat_forbid_mechanics)
MECHANICS = ("attack_cities", "buy_tiles", "truce", "pact", "rush")
M_ATTACK_CITIES, M_BUY_TILES, M_TRUCE, M_PACT, M_RUSH = range(len(MECHANICS))
# AI skill levels (D11): 0 the greedy utility AI, 1 with lookahead, 2 a search player
SKILLS = (0, 1, 2)
SKILL_GREEDY, SKILL_LOOKAHEAD, SKILL_SEARCH = SKILLS
# random legal play (issue 43, the ladder's floor): every turn the seat's orders are drawn
# uniformly among those it may give; no level of D11, so not in SKILLS. `skill = "random"`
# in seat_ai, this code in the state and the seats table
SKILL_RANDOM = 3
SKILL_RANDOM_NAME = "random"
# the learned value of a position (skill 1, D11; [ai.value], sim.kernels.lookahead.position_value,
# tools/fit_value.py): the features of a seat's standing, each but the first two its own
# number minus the best alive rival's. bias: 1; progress: % of the match's turns played;
# score: T13 score; cities: cities held; science: science earned (stock + known techs'
# costs); army: its units' cost, units that can attack; gold: gold stock; dominance: the
# V18 counter; late_score: the score lead × progress / 100 (a lead counts more late)
VALUE_FEATURES = ("bias", "progress", "score", "cities", "science", "army", "gold",
                  "dominance", "late_score")
(F_BIAS, F_PROGRESS, F_SCORE, F_CITIES, F_SCIENCE, F_ARMY, F_GOLD, F_DOMINANCE,
 F_LATE_SCORE) = range(len(VALUE_FEATURES))
N_VALUE_FEATURES = len(VALUE_FEATURES)
# [ai.value] weights are in 1/VALUE_UNIT of a logit of the win chance per unit of feature
VALUE_UNIT = 10_000
# a seat's war order (State.seat_target), besides a city: the AI's own war target, or none
ORDER_OWN_TARGET, ORDER_NO_WAR = -1, -2

# the tile-purchase check (T04, B2) answers one of these; BUY_REASON maps each to the
# command's refusal reason
BUY_CHECKS = ("ok", "not_a_city", "neutral_city", "not_owner", "impassable", "in_region",
              "not_adjacent", "no_gold")
(BUY_OK, BUY_NOT_A_CITY, BUY_NEUTRAL_CITY, BUY_NOT_OWNER, BUY_IMPASSABLE, BUY_IN_REGION,
 BUY_NOT_ADJACENT, BUY_NO_GOLD) = range(len(BUY_CHECKS))
BUY_REASON = (OK, R_NO_CITY, R_BUY_NEUTRAL, R_NOT_YOUR_CITY, R_IMPASSABLE, R_BUY_IN_REGION,
              R_BUY_NOT_ADJACENT, R_NO_GOLD)

# sim bench match --phases (sim.kernels.timing): the parts of a match it times, in
# this order; the match loop, when timed, adds phase k's CPU cycles to ticks[k]
PHASES = (
    "setup",                # map, starts, first units (setup_match)
    "upkeep_neutrals",      # once a turn: truce and pact counters, villages and bandits
    "flow_heal_moves",      # each seat's turn opens: healing (D3), moves renewed
    "flow_income",          # income, upkeep, disbanding (T05, T06)
    "flow_production",      # what cities finish (T07; a science win)
    "flow_growth_events",   # growth, repair, revolts, the event card
    "victory_checks",       # dominance (V18) each seat turn, the turn limit (V19)
    "lookahead",            # a skill-1 or skill-2 seat's playouts (none at skill 0)
    "ai_research_diplomacy",
    "ai_territory_score",   # the AI's one read of territory and the public score (T10)
    "ai_targets_threats",   # army count, war target, Observatory alarm, city threats
    "ai_production",
    "ai_gold",
    "ai_unit_orders",       # every unit's move and attack, with its pathing
    "turn_record",          # the per-turn log (record_turn)
)
N_PHASES = len(PHASES)
(P_SETUP, P_UPKEEP, P_HEAL, P_INCOME, P_PRODUCTION, P_GROWTH, P_VICTORY, P_LOOKAHEAD,
 P_AI_RESEARCH, P_AI_TERRITORY, P_AI_TARGETS, P_AI_PRODUCTION, P_AI_GOLD, P_AI_UNITS,
 P_RECORD) = range(N_PHASES)
