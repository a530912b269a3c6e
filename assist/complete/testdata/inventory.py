"""Inventory service: stock levels, reservations and reorder rules.

The service keeps one record per SKU and warehouse, applies reservations
atomically and computes reorder quantities from the recent demand.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import logging
import math
import statistics
import threading
from collections import defaultdict
from typing import Dict, Iterable, List, Optional, Tuple

log = logging.getLogger(__name__)

DEFAULT_LEAD_DAYS = 7
SAFETY_FACTOR = 1.65  # about 95 % service level
MAX_RESERVATION_AGE = dt.timedelta(hours=24)


class InventoryError(Exception):
    """Base class of the errors this module raises."""


class OutOfStock(InventoryError):
    def __init__(self, sku: str, wanted: int, available: int) -> None:
        super().__init__(f"{sku}: wanted {wanted}, only {available} available")
        self.sku = sku
        self.wanted = wanted
        self.available = available


class UnknownItem(InventoryError):
    pass


@dataclasses.dataclass
class Item:
    sku: str
    name: str
    unit_cost: float
    lead_days: int = DEFAULT_LEAD_DAYS
    discontinued: bool = False

    def cost_of(self, quantity: int) -> float:
        return round(self.unit_cost * quantity, 2)


@dataclasses.dataclass
class Reservation:
    id: int
    sku: str
    warehouse: str
    quantity: int
    created: dt.datetime
    order_id: Optional[str] = None

    def expired(self, now: dt.datetime) -> bool:
        return now - self.created > MAX_RESERVATION_AGE


@dataclasses.dataclass
class StockLevel:
    on_hand: int = 0
    reserved: int = 0
    incoming: int = 0

    @property
    def available(self) -> int:
        return max(self.on_hand - self.reserved, 0)


class DemandHistory:
    """Daily demand per SKU over a sliding window."""

    def __init__(self, days: int = 56) -> None:
        self.days = days
        self._by_sku: Dict[str, Dict[dt.date, int]] = defaultdict(dict)

    def record(self, sku: str, day: dt.date, quantity: int) -> None:
        series = self._by_sku[sku]
        series[day] = series.get(day, 0) + quantity
        cutoff = day - dt.timedelta(days=self.days)
        for old in [d for d in series if d < cutoff]:
            del series[old]

    def daily(self, sku: str, today: dt.date) -> List[int]:
        series = self._by_sku.get(sku, {})
        return [series.get(today - dt.timedelta(days=i), 0) for i in range(self.days)]

    def mean_and_stdev(self, sku: str, today: dt.date) -> Tuple[float, float]:
        values = self.daily(sku, today)
        if len(values) < 2:
            return float(sum(values)), 0.0
        return statistics.fmean(values), statistics.pstdev(values)


class Inventory:
    """Stock of every item in every warehouse."""

    def __init__(self, items: Iterable[Item], history: Optional[DemandHistory] = None) -> None:
        self._items = {item.sku: item for item in items}
        self._stock: Dict[Tuple[str, str], StockLevel] = defaultdict(StockLevel)
        self._reservations: Dict[int, Reservation] = {}
        self._next_id = 1
        self._lock = threading.RLock()
        self.history = history or DemandHistory()

    def item(self, sku: str) -> Item:
        try:
            return self._items[sku]
        except KeyError:
            raise UnknownItem(sku) from None

    def level(self, sku: str, warehouse: str) -> StockLevel:
        self.item(sku)
        return self._stock[(sku, warehouse)]

    def receive(self, sku: str, warehouse: str, quantity: int) -> StockLevel:
        if quantity <= 0:
            raise ValueError(f"quantity must be positive, got {quantity}")
        with self._lock:
            level = self.level(sku, warehouse)
            level.on_hand += quantity
            level.incoming = max(level.incoming - quantity, 0)
            log.info("received %d of %s at %s", quantity, sku, warehouse)
            return level

    def reserve(self, sku: str, warehouse: str, quantity: int, now: dt.datetime,
                order_id: Optional[str] = None) -> Reservation:
        with self._lock:
            level = self.level(sku, warehouse)
            if level.available < quantity:
                raise OutOfStock(sku, quantity, level.available)
            level.reserved += quantity
            r = Reservation(self._next_id, sku, warehouse, quantity, now, order_id)
            self._reservations[r.id] = r
            self._next_id += 1
            return r

    def release(self, reservation_id: int) -> None:
        with self._lock:
            r = self._reservations.pop(reservation_id, None)
            if r is None:
                return
            self._stock[(r.sku, r.warehouse)].reserved -= r.quantity

    def ship(self, reservation_id: int, today: dt.date) -> int:
        with self._lock:
            r = self._reservations.pop(reservation_id)
            level = self._stock[(r.sku, r.warehouse)]
            level.reserved -= r.quantity
            level.on_hand -= r.quantity
            self.history.record(r.sku, today, r.quantity)
            return level.on_hand

    def expire(self, now: dt.datetime) -> List[Reservation]:
        with self._lock:
            gone = [r for r in self._reservations.values() if r.expired(now)]
            for r in gone:
                self.release(r.id)
            return gone

    def reorder_point(self, sku: str, today: dt.date) -> int:
        item = self.item(sku)
        mean, stdev = self.history.mean_and_stdev(sku, today)
        safety = SAFETY_FACTOR * stdev * math.sqrt(item.lead_days)
        return math.ceil(mean * item.lead_days + safety)

    def reorder_quantity(self, sku: str, warehouse: str, today: dt.date) -> int:
        pass

    def valuation(self) -> float:
        total = 0.0
        for (sku, _), level in self._stock.items():
            total += self._items[sku].unit_cost * level.on_hand
        return round(total, 2)

    def report(self, warehouse: str) -> List[str]:
        lines = []
        for (sku, wh), level in sorted(self._stock.items()):
            if wh != warehouse:
                continue
            item = self._items[sku]
            lines.append(f"{sku:<10} {item.name:<30} {level.on_hand:>6} {level.reserved:>6} {level.available:>6}")
        return lines


def load_items(rows: Iterable[Dict[str, str]]) -> List[Item]:
    items = []
    for row in rows:
        items.append(Item(
            sku=row["sku"],
            name=row["name"],
            unit_cost=float(row["unit_cost"]),
            lead_days=int(row.get("lead_days") or DEFAULT_LEAD_DAYS),
            discontinued=row.get("discontinued", "").lower() in ("1", "true", "yes"),
        ))
    return items


def transfer(inv: Inventory, sku: str, source: str, target: str, quantity: int) -> None:
    with inv._lock:
        level = inv.level(sku, source)
        if level.available < quantity:
            raise OutOfStock(sku, quantity, level.available)
        level.on_hand -= quantity
        inv.level(sku, target).incoming += quantity
