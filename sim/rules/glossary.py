"""One line per rule ID of the rule digest (RULES.md: part A's V and T rules, part B's
readings, part D's fairness readings), so a page that names a rule can say what it
is. Pure data: the digest's numbering is the contract; reword a title, never renumber."""

from __future__ import annotations

import re

RULE_TITLES: dict[str, str] = {
    "V01": "A match ends by conquest, science, dominance or the turn limit (in that order "
           "of precedence)",
    "V02": "A seat that loses its last city is eliminated",
    "V03": "Conquest: the last seat left wins",
    "V04": "Losing the capital alone is not elimination",
    "V05": "Capture: city HP at 0 and a unit moving in; population −1, queue and stores "
           "wiped",
    "V06": "The neutral side holds no seat and never wins",
    "V07": "Truce (and pact): no attack on, or entry into, the other's cities",
    "V08": "A fallen capital hands its seat's cities within 4 steps to the capturer, in "
           "revolt",
    "V09": "A transferred city keeps population, HP and food; its queue is wiped",
    "V10": "A new capital can fall again; every city in the radius: eliminated at once",
    "V11": "Revolt lasts 3 turns: no yields, science, production or repair; defence ×0.5",
    "V12": "Ownership changes at once: a revolting city scores for its new owner",
    "V13": "A Divan shortens the revolt of a capital-fall transfer",
    "V14": "Public unrest can put a seat's own city in revolt",
    "V15": "A directly captured city does not revolt; capture clears a revolt",
    "V16": "Science: completing the Observatory wins at once",
    "V17": "A queued Observatory is lost with its city; a revolt pauses it",
    "V18": "Dominance: a 75% share of the seats' cities at the start of 8 of the seat's "
           "turns running wins (defaults)",
    "V19": "Turn limit: the highest score wins (tiebreaks T11)",
    "V20": "Human seats: the match ends when no human seat is left",
    "T01": "A city's region is the radius-1 ring around it",
    "T02": "Region nodes yield income; region tiles count for score",
    "T03": "At population 3 or more the ring is radius 2",
    "T04": "Buying a tile: 6 gold, +3 for each the city bought before",
    "T05": "Bought tiles belong to the city and change hands with it",
    "T06": "A neutral village has no region until a seat takes it",
    "T07": "Cities are at least 4 hex steps apart",
    "T08": "Each tile has one owner: bought beats ring, then the closer city",
    "T09": "A node under two of a seat's rings yields once",
    "T10": "Every seat's score and its breakdown are public",
    "T11": "Score ties: population, then region tiles, then gold stock, then seat order",
    "T12": "The seat that opens the turn rotates; seating order is fixed",
    "T13": "Score = region, population and city terms + floor(gold / 5) + Monument points",
    "T14": "Monument points pass with the city; a conquered Monument counts",
    "T15": "Bounds: city quota 6, population ceiling 5, rings of at most 19 tiles",
    "T16": "No hidden numbers: combat is deterministic",
    "B1": "The city quota limits founding; capture and transfers may exceed it",
    "B2": "A tile is bought by one city, adjacent to that city's region",
    "B3": "V05's accumulated stores: accumulated production and the food store",
    "B4": "Law's share of a revolting city's gold and food income",
    "B5": "V18 is checked only for standing seats, at the start of their turn",
    "B6": "When each victory is checked",
    "B7": "A captured neutral village follows V05 and becomes an ordinary city",
    "B8": "A seat's flow: income, then production, then revolt counters",
    "B9": "One Observatory (and one Monument) per empire, built or queued",
    "D1": "Fair seats: balanced start tiles dealt by a seeded permutation",
    "D2": "Every combat modifier changes the damage",
    "D3": "Healing of units that rested",
    "D4": "Bandits spawn, move and fight units",
    "D5": "Disband",
    "D6": "Game speed: each match length scales costs",
    "D7": "Science after the last tech stays unspent",
    "D8": "The AI reads scores and threats and pursues its personality's victory",
}

# a rule ID as the report writes it: V01–V20, T01–T16, B1–B9, D1–D8
RULE_ID = re.compile(r"(?<![\w.-])([VT]\d\d|[BD]\d)(?![\w-])")


def mentioned_rules(text: str) -> list[str]:
    """The rule IDs of RULE_TITLES that `text` names, in the digest's order."""
    found = set(RULE_ID.findall(text))
    return [rule for rule in RULE_TITLES if rule in found]


__all__ = ["RULE_ID", "RULE_TITLES", "mentioned_rules"]
