"""A scenario's starting state, built from its validated spec (every cross-check
that needs the board or the tables: off-board tiles, city spacing, names).
"""

from __future__ import annotations

from pathlib import Path

from sim.engine.commands import (
    COMMANDS,
)
from sim.engine.scenario.spec import (
    CitySpec,
    CommandSpec,
    Scenario,
    ScenarioError,
    ScenarioSpec,
    key_location,
    parse_scenario,
)
from sim.kernels.rules.cities import max_hp
from sim.rules.codes import (
    BANDIT,
    NEUTRAL,
    NODE_KINDS,
    REVOLT_TRANSFER,
    REVOLT_UNREST,
    TERRAINS,
)
from sim.rules.tables import (
    Tables,
)
from sim.world.board import make_board
from sim.world.rng import Purpose, stream_seed
from sim.world.state import (
    State,
    empty_state,
)


def load_scenario(path: str | Path, tables_path: str | Path | None = None) -> Scenario:
    """Parse and validate a scenario file and build its starting state."""
    path = str(path)
    spec, lines, tables = parse_scenario(path, tables_path)
    builder = _Builder(path, lines, spec, tables)
    state = builder.build()
    return Scenario(path, spec, tables, builder.board, state, lines)




class _Builder:
    """Turns a validated spec into a State, failing on the first illegal position."""

    def __init__(self, path: str, lines: dict[tuple, int], spec: ScenarioSpec, tables: Tables):
        self.path, self.lines, self.spec, self.tables = path, lines, spec, tables
        self.board = make_board(spec.board.radius)
        # the record a match at this seat count plays with (D6's seat scales)
        self.tb = tables.arrays(None, len(spec.seats))

    def fail(self, loc: tuple, reason: str) -> None:
        raise ScenarioError(f"{key_location(self.path, self.lines, loc)}: {reason}")

    def tile(self, at: list[int], loc: tuple) -> int:
        t = self.board.index(at[0], at[1])
        if t < 0:
            self.fail(loc, f"tile {at} is off the board (radius {self.board.radius})")
        return t

    def seat_index(self, seat: int, loc: tuple) -> int:
        if not 0 <= seat < len(self.spec.seats):
            self.fail(loc, f"seat {seat} is not in [[seats]] (0..{len(self.spec.seats) - 1})")
        return seat

    def name_index(self, names: list[str], name: str, what: str, loc: tuple) -> int:
        if name not in names:
            self.fail(loc, f"unknown {what} {name!r}; known: {', '.join(names)}")
        return names.index(name)

    def listed_once(self, values: list, loc: tuple) -> None:
        """Each of `values` (a list in the file at `loc`) at most once: a second entry
        would silently override or repeat the first."""
        first: dict = {}
        for k, value in enumerate(values):
            key = tuple(value) if isinstance(value, list) else value
            if key in first:
                self.fail((*loc, k), f"{value!r} is listed twice (also at index {first[key]})")
            first[key] = k

    def build(self) -> State:
        spec, tables, tb, board = self.spec, self.tables, self.tb, self.board
        n_seats = len(spec.seats)
        st = empty_state(board.n_tiles, n_seats, len(tables.tech_names),
                         len(tables.building_names))
        st.turn[0] = spec.turn
        st.last_turn[0] = spec.match_length or tables.match_length(None, n_seats)
        if spec.turn > st.last_turn[0]:
            self.fail(("turn",), f"turn {spec.turn} is past the match length {st.last_turn[0]}")
        st.active_seat[0] = self.seat_index(spec.active_seat, ("active_seat",))
        st.rng_events[0] = stream_seed(spec.seed, 0, Purpose.EVENTS)
        for s in range(n_seats):
            st.rng_ai[s] = stream_seed(spec.seed, 0, Purpose.AI, s)

        st.tile_terrain[: board.n_tiles] = TERRAINS.index(spec.board.terrain)
        seen: dict[int, int] = {}
        for i, ts in enumerate(spec.board.tiles):
            t = self.tile(ts.at, ("board", "tiles", i, "at"))
            if t in seen:  # the later entry would silently replace the earlier one
                self.fail(("board", "tiles", i, "at"), f"tile {ts.at} is already listed as "
                          f"board.tiles.{seen[t]}")
            seen[t] = i
            if ts.terrain is not None:
                st.tile_terrain[t] = TERRAINS.index(ts.terrain)
            if ts.node is not None:
                if not tb.terrain_passable[st.tile_terrain[t]]:
                    self.fail(("board", "tiles", i, "node"),
                              "resource nodes sit on passable tiles only")
                st.tile_node[t] = NODE_KINDS.index(ts.node)

        personalities = tables.personality_names
        default_pers = tables.model.match.personalities
        for s, ss in enumerate(spec.seats):
            st.seat_gold[s] = tb.start_gold if ss.gold is None else ss.gold
            st.seat_science[s] = ss.science
            self.listed_once(ss.techs, ("seats", s, "techs"))
            for k, tech in enumerate(ss.techs):
                st.seat_techs[s, self.name_index(tables.tech_names, tech, "tech",
                                                 ("seats", s, "techs", k))] = True
            if ss.dominance_counter >= tb.dominance_to_win:
                self.fail(("seats", s, "dominance_counter"),
                          f"must be below the winning counter {tb.dominance_to_win}")
            st.seat_dominance[s] = ss.dominance_counter
            st.seat_human[s] = ss.human
            pers = ss.personality or default_pers[s % len(default_pers)]
            st.seat_personality[s] = self.name_index(personalities, pers, "personality",
                                                     ("seats", s, "personality"))

        self._cities(st)
        self._units(st)
        for i, tr in enumerate(spec.truces):
            a = self.seat_index(tr.seats[0], ("truces", i, "seats"))
            b = self.seat_index(tr.seats[1], ("truces", i, "seats"))
            if a == b:
                self.fail(("truces", i, "seats"), "a truce needs two different seats")
            st.truce_turns[a, b] = st.truce_turns[b, a] = tr.turns
        if len(spec.pacts) > st.pact_target.shape[0]:
            self.fail(("pacts",), f"at most {st.pact_target.shape[0]} pacts")
        for i, pact in enumerate(spec.pacts):
            target = self.seat_index(pact.target, ("pacts", i, "target"))
            for m in pact.members:
                self.seat_index(m, ("pacts", i, "members"))
                if m == target:
                    self.fail(("pacts", i, "members"), "a pact's target cannot be a member")
                st.pact_members[i, m] = True
            st.pact_target[i] = target
            st.pact_turns[i] = pact.turns
        if len(spec.camps) > st.camp_tile.shape[0]:
            self.fail(("camps",), f"at most {st.camp_tile.shape[0]} camps")
        for i, camp in enumerate(spec.camps):
            t = self.tile(camp.at, ("camps", i, "at"))
            if st.tile_site[t] >= 0:
                self.fail(("camps", i, "at"), "a camp cannot stand on a city")
            st.camp_tile[i] = t
        for i, cmd in enumerate(spec.commands):
            self._check_command(i, cmd)
        return st

    def _cities(self, st: State) -> None:
        """[[cities]]: each city placed and filled in file order, then each seat's
        capital (V02: a seat with none is out), then the tiles cities bought (T04)."""
        spec = self.spec
        if len(spec.cities) > st.city_tile.shape[0]:
            self.fail(("cities",), f"at most {st.city_tile.shape[0]} cities")
        for c, cs in enumerate(spec.cities):
            owner = self._place_city(st, c, cs)
            self._city_size(st, c, cs, owner)
            self._city_revolt(st, c, cs)
            self._city_work(st, c, cs)
            self._city_role(st, c, cs, owner)
        self._capitals(st)
        self._bought_tiles(st)
        if not st.seat_alive[st.active_seat[0]]:
            self.fail(("active_seat",), f"seat {st.active_seat[0]} holds no city")

    def _place_city(self, st: State, c: int, cs: CitySpec) -> int:
        """City `c` on its tile: a passable one, at least city_min_distance from every
        earlier city (T07). Returns its owner (a seat, or NEUTRAL for a village)."""
        tb, board = self.tb, self.board
        loc = ("cities", c)
        owner = NEUTRAL if cs.seat == "neutral" else self.seat_index(cs.seat, (*loc, "seat"))
        t = self.tile(cs.at, (*loc, "at"))
        if not tb.terrain_passable[st.tile_terrain[t]]:
            self.fail((*loc, "at"), f"city on impassable tile {cs.at}")
        for o in range(c):
            d = int(board.distance[t, st.city_tile[o]])
            if d < tb.city_min_distance:
                self.fail((*loc, "at"), f"city {c} at {cs.at} is {d} steps from city {o}; "
                          f"cities stay at least {tb.city_min_distance} apart (T07)")
        st.n_cities[0] = c + 1
        st.city_tile[c] = t
        st.tile_site[t] = c
        st.city_owner[c] = owner
        return owner

    def _city_size(self, st: State, c: int, cs: CitySpec, owner: int) -> None:
        """Population (a village's or a new city's by default, at most the ceiling,
        T15), buildings (each once), then HP: at most the max those give (full by
        default)."""
        tables, tb = self.tables, self.tb
        loc = ("cities", c)
        default_pop = tb.village_population if owner == NEUTRAL else tb.start_population
        pop = cs.pop if cs.pop is not None else default_pop
        if pop > tb.max_population:
            self.fail((*loc, "pop"), f"population {pop} is above the ceiling "
                      f"{tb.max_population} (T15)")
        st.city_pop[c] = pop
        self.listed_once(cs.buildings, (*loc, "buildings"))
        for k, b in enumerate(cs.buildings):
            st.city_buildings[c, self.name_index(tables.building_names, b, "building",
                                                 (*loc, "buildings", k))] = True
        # the max reads the population and buildings just set
        hp_max = int(max_hp(st, tb, c))
        if cs.hp is not None and cs.hp > hp_max:
            self.fail((*loc, "hp"), f"hp {cs.hp} is above the city's max {hp_max}")
        st.city_hp[c] = hp_max if cs.hp is None else cs.hp

    def _city_revolt(self, st: State, c: int, cs: CitySpec) -> None:
        """Revolt turns left and their cause (V11 transfer by default, V14 unrest); a
        cause only with turns left."""
        if cs.revolt_cause is not None and not cs.revolt:
            self.fail(("cities", c, "revolt_cause"), "a city with revolt = 0 is not in "
                      "revolt: give its revolt turns left, or leave revolt_cause out")
        st.city_revolt[c] = cs.revolt
        if cs.revolt:
            st.city_revolt_cause[c] = REVOLT_UNREST if cs.revolt_cause == "unrest" \
                else REVOLT_TRANSFER

    def _city_work(self, st: State, c: int, cs: CitySpec) -> None:
        """Food and production stored, and the build queue (each item's index into the
        unit names followed by the building names); production only with something
        queued."""
        tables = self.tables
        loc = ("cities", c)
        st.city_food[c] = cs.food
        st.city_production[c] = cs.production
        if cs.production and not cs.queue:
            self.fail((*loc, "production"), "production is what the front queue item has "
                      "accumulated, and this city's queue is empty")
        if len(cs.queue) > st.city_queue.shape[1]:
            self.fail((*loc, "queue"), f"at most {st.city_queue.shape[1]} items")
        names = tables.unit_names + tables.building_names
        for k, item in enumerate(cs.queue):
            st.city_queue[c, k] = self.name_index(names, item, "unit or building",
                                                  (*loc, "queue", k))

    def _city_role(self, st: State, c: int, cs: CitySpec, owner: int) -> None:
        """A neutral village has no capital, bought tiles or queue (T06); a city that
        says capital = true is its seat's capital, one per seat."""
        loc = ("cities", c)
        if owner == NEUTRAL:
            for key in ("capital", "bought", "queue"):
                if getattr(cs, key):
                    self.fail((*loc, key), "a neutral village has no capital, region "
                              "or queue (T06)")
        elif cs.capital:
            if st.seat_capital[owner] >= 0:
                self.fail((*loc, "capital"), f"seat {owner} already has capital "
                          f"city {st.seat_capital[owner]}")
            st.seat_capital[owner] = c

    def _capitals(self, st: State) -> None:
        """Each seat's capital flagged; a seat with no city is out (V02)."""
        spec = self.spec
        # a seat's first listed city is its capital unless one says capital = true
        for c, cs in enumerate(spec.cities):
            owner = st.city_owner[c]
            if owner >= 0 and st.seat_capital[owner] < 0 and cs.capital is not False:
                st.seat_capital[owner] = c
        for s in range(len(spec.seats)):
            if st.seat_capital[s] >= 0:
                st.city_capital[st.seat_capital[s]] = True
            elif any(st.city_owner[c] == s for c in range(st.n_cities[0])):
                self.fail(("cities",), f"seat {s} has cities but none may be its capital")
            else:
                st.seat_alive[s] = False  # V02: a seat with no city is out

    def _bought_tiles(self, st: State) -> None:
        """The tiles each city bought (T04): passable, no city's tile, bought once."""
        tb = self.tb
        for c, cs in enumerate(self.spec.cities):
            for k, at in enumerate(cs.bought):
                t = self.tile(at, ("cities", c, "bought", k))
                if not tb.terrain_passable[st.tile_terrain[t]]:
                    self.fail(("cities", c, "bought", k), f"bought tile {at} is impassable (T04)")
                if st.tile_site[t] >= 0:
                    self.fail(("cities", c, "bought", k), f"bought tile {at} is a city's tile")
                if st.tile_bought_by[t] >= 0:
                    self.fail(("cities", c, "bought", k),
                              f"tile {at} is already bought by city {st.tile_bought_by[t]}")
                st.tile_bought_by[t] = c

    def _units(self, st: State) -> None:
        spec, tables, tb = self.spec, self.tables, self.tb
        if len(spec.units) > st.unit_tile.shape[0]:
            self.fail(("units",), f"at most {st.unit_tile.shape[0]} units")
        for u, us in enumerate(spec.units):
            loc = ("units", u)
            if us.seat == "bandit":
                owner, utype = BANDIT, -1
                if us.type != "bandit":
                    self.fail((*loc, "type"), "a bandit's type is \"bandit\"")
                full = tb.bandit_hp
                moves = 1
            else:
                owner = self.seat_index(us.seat, (*loc, "seat"))
                if not st.seat_alive[owner]:
                    self.fail((*loc, "seat"), f"seat {owner} holds no city (eliminated)")
                utype = self.name_index(tables.unit_names, us.type, "unit type", (*loc, "type"))
                full = int(tb.unit_hp[utype])
                moves = int(tb.unit_moves[utype])
            t = self.tile(us.at, (*loc, "at"))
            if not tb.terrain_passable[st.tile_terrain[t]]:
                self.fail((*loc, "at"), f"unit on impassable tile {us.at}")
            if st.tile_unit[t] >= 0:
                self.fail((*loc, "at"), f"unit {st.tile_unit[t]} already stands on {us.at} "
                          "(one unit per tile)")
            site = st.tile_site[t]
            if site >= 0 and st.city_owner[site] != owner:
                self.fail((*loc, "at"), f"unit inside city {site} of another side")
            if us.hp is not None and us.hp > full:
                self.fail((*loc, "hp"), f"hp {us.hp} is above the unit's max {full}")
            st.n_units[0] = u + 1
            st.unit_type[u] = utype
            st.unit_owner[u] = owner
            st.unit_tile[u] = t
            st.tile_unit[t] = u
            st.unit_hp[u] = full if us.hp is None else us.hp
            st.unit_moves_left[u] = moves if us.moves_left is None else us.moves_left

    def _check_command(self, i: int, cmd: CommandSpec) -> None:
        loc = ("commands", i)
        if cmd.do not in COMMANDS:
            self.fail((*loc, "do"), f"unknown command {cmd.do!r}; known: {', '.join(COMMANDS)}")
        _code, needed = COMMANDS[cmd.do]
        given = {("with" if k == "with_" else k) for k, v in cmd if v is not None and k != "do"}
        for key in needed:
            if key not in given:
                self.fail(loc, f"{cmd.do} needs key {key!r}")
        for key in sorted(given - set(needed)):
            takes = ", ".join(needed) or "no keys"
            self.fail((*loc, key), f"unknown key for {cmd.do} (it takes {takes})")
        for key in ("to", "target", "at"):
            value = getattr(cmd, key)
            if value is not None:
                self.tile(value, (*loc, key))
        if cmd.item is not None:
            self.name_index(self.tables.unit_names + self.tables.building_names, cmd.item,
                            "unit or building", (*loc, "item"))
        if cmd.tech is not None:
            self.name_index(self.tables.tech_names, cmd.tech, "tech", (*loc, "tech"))


