"""The order in which a coordinator grants waiting timed windows (no torch, no I/O).

`Fifo` serves a matrix; `Turns` makes two processes take turns, for a benchmark that compares them under the
same host; `Grouped` runs several such comparisons under one coordinator at once.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from reportgen.run.window import STEPS_WINDOW

__all__ = ["Fifo", "Grouped", "Policy", "Request", "Turns", "Window"]


@dataclass
class Request:
    """A window asked for and not yet granted."""

    connection: int
    pid: int
    role: str
    what: str
    asked: float = field(default_factory=time.monotonic)
    gpu_only: bool = False
    """Pause only the runs that share the asker's GPU (a GPU-timed benchmark), not the whole host."""


class Policy:
    """Which waiting request gets the next window (None: none yet). `Fifo` is the default.

    `choose` is asked by every waiting thread and must not change the policy's state; `granted` does.
    """

    def choose(self, waiting: list[Request]) -> Request | None:
        return waiting[0] if waiting else None

    def granted(self, request: Request) -> None:
        """`request` got its window."""

    def retire(self, role: str) -> None:
        """No more windows will come from `role` (its process ended)."""

    def holding(self) -> bool:
        """Whether a pair is half granted: no other window may slip in before its second member."""
        return False

    def settle_s(self, request: Request, paused: list[str], default: float) -> float:
        """How long to wait, after stopping `paused` for `request`'s window, before "go" (the coordinator's
        `settle_s` unless a benchmark's policy says otherwise)."""
        return default


class Fifo(Policy):
    """First come, first served: a matrix's runs measure one at a time, in the order they asked."""


Window = tuple[str, str]
"""(role, window name): who asks for which window."""


class Turns(Policy):
    """Processes that take turns, for a benchmark that compares them under the same host.

    Windows named in `alternate` (e.g. `steps`) go strictly in turn between the two `roles` (bare,
    reportgen, bare, …), starting once both are waiting. Each pair in `pairs` (``(("reportgen", "graph 0
    profile"), ("seed", "seed 0"))``) is granted back to back once both are waiting, its first member first
    (`swap()` makes the second go first), once: a later window of the same name is first come, first served,
    unless a later pair names it too. A window named in several pairs takes them in their order (a graph's timing
    in each of reportgen's rounds with a `-p` of its own: `("seed#1", …)`), whoever asks first; a pair whose other
    role has retired is skipped.
    A retired role's partner goes on alone; every other window is first come, first served. A window whose
    partner has not come within `partner_wait_s` goes alone, and its pair is dropped: nothing waits for the
    partner then (it may have earlier windows of its own to take first: holding the host for it would deadlock).
    """

    def __init__(
        self,
        roles: tuple[str, str],
        alternate: Iterable[str] = (STEPS_WINDOW,),
        pairs: Iterable[tuple[Window, Window]] = (),
        partner_wait_s: float = 300.0,
    ) -> None:
        self.roles = roles
        self.partner_wait_s = partner_wait_s
        self.alternate = set(alternate)
        self.next_role = roles[0]
        self.alternated = False  # whether an alternate window has gone (`swap` then keeps the turns as they are)
        self.pairs: list[tuple[Window, Window]] = list(pairs)
        self.retired: set[str] = set()
        self.owed: Window | None = None  # the partner of the pair member just granted: it goes next
        self.owed_pair: tuple[Window, Window] | None = None  # … and their pair, dropped once it has gone

    def swap(self) -> None:
        """Pairs' second members go first from now on, and so does the second role in each turn of the alternate
        windows when none has gone yet (alternate comparisons: a linear drift, or an advantage of going second,
        cancels)."""
        self.pairs = [(b, a) for a, b in self.pairs]
        if not self.alternated:
            self.next_role = self.roles[1]

    def retire(self, role: str) -> None:
        self.retired.add(role)

    def holding(self) -> bool:
        return self.owed is not None and self.owed[0] not in self.retired

    def _first_pair(self, window: Window) -> tuple[Window, Window] | None:
        """The first pair that names `window` and whose other member's role has not retired."""
        for pair in self.pairs:
            if window in pair and (pair[1] if pair[0] == window else pair[0])[0] not in self.retired:
                return pair
        return None

    def _pair(self, request: Request) -> tuple[bool, Window] | None:
        """(whether `request` is its pair's first member, its partner), or None when it is in no live pair."""
        pair = self._first_pair((request.role, request.what))
        if pair is None:
            return None
        first = pair[0] == (request.role, request.what)
        return first, pair[1] if first else pair[0]

    def choose(self, waiting: list[Request]) -> Request | None:
        def find(window: Window) -> Request | None:
            return next((r for r in waiting if (r.role, r.what) == window), None)

        if self.owed is not None:  # (no state changes here: every waiting thread asks, only `granted` decides)
            owed = find(self.owed)
            if owed is not None:
                return owed
            if self.owed[0] not in self.retired:
                return None  # the partner is still to come: nothing else may slip between the two
        for request in waiting:
            if self._late(request):
                return request  # its partner is late (stuck or gone unseen): better alone than never
            if request.what in self.alternate and request.role in self.roles:
                partner = self.roles[1] if request.role == self.roles[0] else self.roles[0]
                if partner in self.retired:
                    return request
                both = any(r.what == request.what and r.role == partner for r in waiting)
                if both and request.role == self.next_role:
                    return request
                continue
            pair = self._pair(request)
            if pair is None:
                return request
            first, partner_window = pair
            # a first member goes when its partner waits and takes this pair next (not an earlier one of its own)
            if (
                first
                and find(partner_window) is not None
                and self._first_pair(partner_window) == self._first_pair((request.role, request.what))
            ):
                return request
        return None

    def _late(self, request: Request) -> bool:
        return time.monotonic() - request.asked > self.partner_wait_s

    def granted(self, request: Request) -> None:
        key = (request.role, request.what)
        if self.owed_pair is not None and key == self.owed:  # the pair is complete: never paired again
            self.pairs.remove(self.owed_pair)
            self.owed = self.owed_pair = None
            return
        self.owed = self.owed_pair = None
        if request.what in self.alternate and request.role in self.roles:
            self.next_role = self.roles[1] if request.role == self.roles[0] else self.roles[0]
            self.alternated = True
            return
        pair = self._first_pair(key)
        if pair is None:
            return
        first = pair[0] == key
        if not first or self._late(request):
            self.pairs.remove(pair)  # gone alone: its pair is dropped
        else:
            self.owed, self.owed_pair = pair[1], pair


class Grouped(Policy):
    """Several comparisons at once: role ``"<role>@<group>"`` is `<role>` to the policy of `<group>`.

    Each group's policy orders its own windows (a `Turns` per group: its bare loop and its reportgen run take
    turns); between groups, the window asked first among those the groups would grant goes first. A group
    holding a half-granted pair keeps the host until the pair's second member has gone. Roles without a group
    are first come, first served.
    """

    SEPARATOR = "@"

    def __init__(self, groups: Mapping[str, Policy]) -> None:
        self.groups = dict(groups)

    @classmethod
    def role(cls, role: str, group: str) -> str:
        """The role a process of `group` announces."""
        return f"{role}{cls.SEPARATOR}{group}"

    def _split(self, role: str) -> tuple[Policy, str]:
        base, _, group = role.rpartition(self.SEPARATOR)
        policy = self.groups.get(group) if base else None
        return (policy, base) if policy is not None else (_UNGROUPED, role)

    def choose(self, waiting: list[Request]) -> Request | None:
        local: dict[int, list[tuple[Request, Request]]] = {}  # id(policy) → (its view, the request)
        policies: dict[int, Policy] = {}
        for request in waiting:
            policy, base = self._split(request.role)
            policies[id(policy)] = policy
            local.setdefault(id(policy), []).append((dataclasses.replace(request, role=base), request))
        holding = [key for key, policy in policies.items() if policy.holding()]
        holding += [id(p) for p in self.groups.values() if p.holding() and id(p) not in policies]
        candidates = []
        for key in holding or list(local):
            views = local.get(key, [])
            chosen = policies[key].choose([view for view, _ in views]) if views else None
            candidates += [request for view, request in views if view is chosen]
        return min(candidates, key=lambda r: r.asked, default=None)

    def granted(self, request: Request) -> None:
        policy, base = self._split(request.role)
        policy.granted(dataclasses.replace(request, role=base))

    def retire(self, role: str) -> None:
        policy, base = self._split(role)
        policy.retire(base)


_UNGROUPED = Fifo()
"""The policy of roles that name no group (stateless: one is shared)."""
