"""ALFRED object types, their properties, and which room types hold them.

Property sets follow ALFRED/AI2-THOR's object metadata where it matters for the seven
task types; types outside them behave as plain objects. Room types map to FloorPlan
ranges: kitchen 1–30, living room 201–230, bedroom 301–330, bathroom 401–430.
"""

from __future__ import annotations

from functools import cache

RECEPTACLES = frozenset(
    [
        "ArmChair",
        "BathtubBasin",
        "Bed",
        "Cabinet",
        "Cart",
        "CoffeeMachine",
        "CoffeeTable",
        "CounterTop",
        "Desk",
        "DiningTable",
        "Drawer",
        "Dresser",
        "Fridge",
        "GarbageCan",
        "HandTowelHolder",
        "LaundryHamper",
        "Microwave",
        "Ottoman",
        "Safe",
        "Shelf",
        "SideTable",
        "SinkBasin",
        "Sofa",
        "StoveBurner",
        "TVStand",
        "Toilet",
        "ToiletPaperHanger",
        "TowelHolder",
        "Bowl",
        "Box",
        "Cup",
        "Mug",
        "Pan",
        "Plate",
        "Pot",
    ]
)
MOVABLE_RECEPTACLES = frozenset(["Bowl", "Box", "Cup", "Mug", "Pan", "Plate", "Pot"])
# Box is not openable: EB-ALFRED plans put things in a box without opening it.
OPENABLE = frozenset(["Cabinet", "Drawer", "Fridge", "Microwave", "Safe"])
TOGGLEABLE = frozenset(
    [
        "DeskLamp",
        "FloorLamp",
        "Faucet",
        "Microwave",
        "StoveKnob",
        "Television",
        "CoffeeMachine",
        "Toaster",
        "LightSwitch",
    ]
)
LAMPS = frozenset({"DeskLamp", "FloorLamp"})
SLICEABLE = frozenset(["Apple", "Bread", "Lettuce", "Potato", "Tomato"])
KNIVES = frozenset({"Knife", "ButterKnife"})
PICKUPABLE = frozenset(
    [
        "AlarmClock",
        "Apple",
        "BaseballBat",
        "BasketBall",
        "Book",
        "Bowl",
        "Box",
        "Bread",
        "ButterKnife",
        "CD",
        "Candle",
        "CellPhone",
        "Cloth",
        "CreditCard",
        "Cup",
        "DishSponge",
        "Egg",
        "Fork",
        "HandTowel",
        "Kettle",
        "KeyChain",
        "Knife",
        "Ladle",
        "Laptop",
        "Lettuce",
        "Mug",
        "Newspaper",
        "Pan",
        "Pen",
        "Pencil",
        "PepperShaker",
        "Pillow",
        "Plate",
        "Plunger",
        "Pot",
        "Potato",
        "RemoteControl",
        "SaltShaker",
        "SoapBar",
        "SoapBottle",
        "Spatula",
        "Spoon",
        "SprayBottle",
        "Statue",
        "TeddyBear",
        "TennisRacket",
        "TissueBox",
        "ToiletPaper",
        "Tomato",
        "Vase",
        "Watch",
        "WateringCan",
        "WineBottle",
    ]
)
CLEANABLE = frozenset(
    [
        "Apple",
        "Bowl",
        "ButterKnife",
        "Cloth",
        "Cup",
        "DishSponge",
        "Egg",
        "Fork",
        "Kettle",
        "Knife",
        "Ladle",
        "Lettuce",
        "Mug",
        "Pan",
        "Plate",
        "Pot",
        "Potato",
        "SoapBar",
        "Spatula",
        "Spoon",
        "Tomato",
        "HandTowel",
    ]
)
HEATABLE = frozenset(["Apple", "Bread", "Cup", "Egg", "Mug", "Plate", "Potato", "Tomato"])
COOLABLE = frozenset(
    [
        "Apple",
        "Bowl",
        "Bread",
        "Cup",
        "Egg",
        "Lettuce",
        "Mug",
        "Pan",
        "Plate",
        "Pot",
        "Potato",
        "Tomato",
        "WineBottle",
    ]
)
# Fixed parts that belong to a receptacle (a faucet sits at its sink; a knob at its stove).
FIXTURES = {"Faucet": "SinkBasin", "StoveKnob": "StoveBurner"}

ROOMS: dict[str, range] = {
    "kitchen": range(1, 31),
    "living_room": range(201, 231),
    "bedroom": range(301, 331),
    "bathroom": range(401, 431),
}

ROOM_RECEPTACLES: dict[str, list[str]] = {
    "kitchen": [
        "CounterTop",
        "DiningTable",
        "Cabinet",
        "Drawer",
        "Fridge",
        "Microwave",
        "SinkBasin",
        "StoveBurner",
        "GarbageCan",
        "Shelf",
        "CoffeeMachine",
        "SideTable",
    ],
    "living_room": [
        "Sofa",
        "ArmChair",
        "CoffeeTable",
        "SideTable",
        "TVStand",
        "Drawer",
        "Shelf",
        "Cabinet",
        "GarbageCan",
        "DiningTable",
        "Ottoman",
        "Box",
        "Safe",
    ],
    "bedroom": [
        "Bed",
        "Desk",
        "Dresser",
        "SideTable",
        "Drawer",
        "Shelf",
        "GarbageCan",
        "Safe",
        "ArmChair",
        "LaundryHamper",
        "Cart",
    ],
    "bathroom": [
        "CounterTop",
        "SinkBasin",
        "BathtubBasin",
        "Toilet",
        "ToiletPaperHanger",
        "TowelHolder",
        "HandTowelHolder",
        "Cabinet",
        "Drawer",
        "GarbageCan",
        "Shelf",
        "Cart",
    ],
}
ROOM_FIXTURES: dict[str, list[str]] = {
    "kitchen": ["Faucet", "StoveKnob", "LightSwitch"],
    "living_room": ["FloorLamp", "Television", "LightSwitch"],
    "bedroom": ["DeskLamp", "FloorLamp", "LightSwitch"],
    "bathroom": ["Faucet", "LightSwitch"],
}
ROOM_OBJECTS: dict[str, list[str]] = {
    "kitchen": [
        "Apple",
        "Bread",
        "Lettuce",
        "Potato",
        "Tomato",
        "Egg",
        "Mug",
        "Cup",
        "Bowl",
        "Plate",
        "Pan",
        "Pot",
        "Kettle",
        "Knife",
        "ButterKnife",
        "Fork",
        "Spoon",
        "Spatula",
        "Ladle",
        "DishSponge",
        "SaltShaker",
        "PepperShaker",
        "SoapBottle",
        "WineBottle",
    ],
    "living_room": [
        "RemoteControl",
        "Book",
        "Newspaper",
        "KeyChain",
        "CreditCard",
        "Statue",
        "Vase",
        "WateringCan",
        "Box",
        "Pillow",
        "Laptop",
        "Watch",
        "Candle",
        "TissueBox",
    ],
    "bedroom": [
        "AlarmClock",
        "Book",
        "CellPhone",
        "CD",
        "Pen",
        "Pencil",
        "KeyChain",
        "CreditCard",
        "Pillow",
        "Laptop",
        "BaseballBat",
        "TennisRacket",
        "TeddyBear",
        "Mug",
        "Bowl",
        "Watch",
    ],
    "bathroom": [
        "SoapBar",
        "SoapBottle",
        "SprayBottle",
        "ToiletPaper",
        "HandTowel",
        "Cloth",
        "Candle",
        "DishSponge",
        "Plunger",
        "TissueBox",
    ],
}

# Where objects plausibly start, by room (receptacle types), beyond the room's list.
SURFACES = frozenset(
    [
        "CounterTop",
        "DiningTable",
        "SideTable",
        "Desk",
        "Dresser",
        "Shelf",
        "CoffeeTable",
        "TVStand",
        "Sofa",
        "ArmChair",
        "Bed",
        "Ottoman",
        "Cart",
    ]
)


def room_of_floorplan(n: int) -> str:
    for room, r in ROOMS.items():
        if n in r:
            return room
    return "kitchen"


@cache
def base_type(t: str) -> str:
    """``AppleSliced`` → ``Apple``."""
    return t[: -len("Sliced")] if t.endswith("Sliced") else t


@cache
def props(t: str) -> dict[str, bool]:
    """Properties of a type (cached: treat the dict as read-only)."""
    b = base_type(t)
    return {
        "pickupable": b in PICKUPABLE,
        "receptacle": t in RECEPTACLES,
        "openable": t in OPENABLE,
        "toggleable": t in TOGGLEABLE,
        "sliceable": t in SLICEABLE,
        "cleanable": b in CLEANABLE,
        "heatable": b in HEATABLE,
        "coolable": b in COOLABLE,
    }
