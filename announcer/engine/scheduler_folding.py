"""Status news, "current, then most recent" per source (issue 20).

What a newer status folds, what age or room drops, the spoken summary of what was folded
("3 more: 2 edits and 1 command."), and the same final state of several agents said once.
"""

from __future__ import annotations

import dataclasses
from collections import Counter, deque

from announcer.engine.announcement import Announcement, Urgency
from announcer.engine.scheduler_rules import (
    _CHATTER,
    _QUIET_CATEGORIES,
    _SESSION_STARTED,
    _UNSAYABLE,
    ENDED_QUESTIONS_REMEMBERED,
    FOLD_CATEGORIES,
    FOLDED_SUMMARY_KIND,
    QUESTION_END_KINDS,
    STATUS_KINDS,
    _is_failure,
    _is_final,
    _message_end,
    _messages,
    _Queued,
    _said_by,
    _source_of,
    estimated_seconds,
    fold_category,
)
from announcer.engine.scheduler_state import SchedulerState
from announcer.i18n.format import format_integer, format_list
from announcer.i18n.translate import catalog_language, translator


class StatusFolding(SchedulerState):
    """Folding, dropping and summarising status news."""

    def _enforce_bound(self, now: float) -> None:
        normal = self._queues[Urgency.NORMAL]
        background = self._queues[Urgency.BACKGROUND]
        while len(normal) + len(background) > self.max_queue:
            if background:
                self._drop_message(background, "queue full", now)
            else:
                self._note_skipped(self._drop_message(normal, "queue full", now)[0].announcement)

    def _note_skipped(
        self, announcement: Announcement, *, superseded_at: float | None = None
    ) -> None:
        """Count folded news by source and kind, for its spoken summary (issue 20).

        State changes alone never get a summary of their own (a lone "1 more: 1 state
        change." would take longer than the "Thinking." it stands for, and tell less);
        they are counted in the next summary of their source, if one is said. Our own
        words (``system.*``: a reminder that a question is still open) are shown, not
        summarised: "1 more: 1 update." would say nothing of them. A tool's start is
        counted until a result of its kind comes from its source (:meth:`_result_came`):
        then the result says it, so "1 more: 1 tool call." never comes just before it.
        """
        if announcement.kind.startswith("system."):
            return
        source = _source_of(announcement)
        counts = self._folded_news.get(source)
        if counts is None:
            counts = self._folded_news[source] = Counter()
        category = fold_category(announcement)
        counts[category] += 1
        if announcement.kind == "agent.tool.invoked":
            self._unfinished_starts.setdefault(source, Counter())[category] += 1
        items = self._folded_items.setdefault(source, [])
        if category not in _QUIET_CATEGORIES and len(items) < 2:
            # One superseded piece of news is said as itself, more by their count; stale
            # news, or news dropped for room, only by its count.
            items.append((announcement, superseded_at) if superseded_at is not None else _UNSAYABLE)

    def _result_came(self, result: Announcement) -> None:
        """A tool's result says its folded start: that start is no longer counted."""
        source = _source_of(result)
        starts = self._unfinished_starts.get(source)
        category = fold_category(result)
        if not starts or not starts[category]:
            return
        starts[category] -= 1
        items = self._folded_items.get(source, [])
        for index, (item, _) in enumerate(items):
            if item.kind == "agent.tool.invoked" and fold_category(item) == category:
                del items[index]
                break
        counts = self._folded_news.get(source)
        if counts and counts[category]:
            counts[category] -= 1
            if not counts[category]:
                del counts[category]
            if not counts:
                del self._folded_news[source]

    def _summary_due(self) -> bool:
        return any(
            any(category not in _QUIET_CATEGORIES for category in counts)
            for counts in self._folded_news.values()
        )

    def _fold_source(self, incoming: Announcement, now: float) -> None:
        """Newer status news of a source makes its older pending status moot (issue 20).

        "Current, then most recent": only the newest pending status of a source is kept.
        A pending state change or tool start is folded by any newer status of its
        source, a tool's success by its source's next result, a plan step only by a newer
        plan step (the latest step is always said). A tool's failure, a plan's end, a
        session's start and end, and the rest of a message already begun are kept.
        Folded news is counted by kind and summarised ("3 more: 2 edits, 1 command."),
        said before the news that folded it.
        """
        if self.settings.cognitive_load == "high" or self.settings.verbosity == "detailed":
            return  # who asked for every detail hears it (still never older than 10 s)
        source = _source_of(incoming)
        if source is None:
            return
        plan = incoming.kind == "agent.progress.updated"
        result = incoming.kind == "agent.tool.completed"
        # Status due before its source's waiting words is said there (order first).
        words_from = min(
            (item.order for item in self._words if _source_of(item.announcement) == source),
            default=None,
        )
        for urgency in (Urgency.NORMAL, Urgency.BACKGROUND):
            queue = self._queues[urgency]
            if not queue:
                continue
            doomed: set[int] = set()
            # One pass over the heads (this runs for every status submitted, issue 20);
            # a head's later parts (``continues``) go with it.
            for index, head in enumerate(queue):
                announcement = head.announcement
                if (
                    announcement.continues
                    or announcement.kind not in STATUS_KINDS
                    or (announcement.session_id or announcement.producer_id) != source
                    or head.kept
                    or head.lead_for is not None
                    # Said before its source's waiting words: it keeps its place there.
                    or (words_from is not None and head.order < words_from)
                    or announcement.kind == _SESSION_STARTED
                ):
                    continue
                if _is_final(announcement) and (
                    announcement.kind != "agent.tool.completed"
                    or _is_failure(announcement)
                    # What a tool found outranks what the agent does next: only a
                    # newer result folds it, never a state change, plan step or start.
                    or not result
                ):
                    continue
                if announcement.kind == "agent.progress.updated" and not plan:
                    continue
                doomed.update(range(index, _message_end(queue, index)))
            if doomed:
                self._drop_at(urgency, doomed, "superseded by newer news", now, newer=incoming)

    def _drop_at(
        self,
        urgency: Urgency,
        doomed: set[int],
        reason: str,
        now: float,
        *,
        newer: Announcement | None = None,
    ) -> None:
        """Drop and count the items at ``doomed`` indexes of a lane.

        What ``newer`` news says anyway is not counted in a summary: a tool's start when
        its result comes, an older plan step when a newer one comes.
        """
        queue = self._queues[urgency]
        kept: deque[_Queued] = deque()
        for index, item in enumerate(queue):
            if index in doomed:
                self._drop(item.announcement, reason, now)
                announcement = item.announcement
                if not announcement.continues and not _said_by(announcement, newer):
                    whole = index + 1 >= len(queue) or not queue[index + 1].announcement.continues
                    self._note_skipped(
                        announcement,
                        superseded_at=item.eligible_at if newer is not None and whole else None,
                    )
            else:
                kept.append(item)
        self._queues[urgency] = kept

    def _protected(self, item: _Queued, newest_plan: dict[str | None, int], index: int) -> bool:
        """Never dropped for age: a session's start and end, a tool's result, a plan's
        latest step, why a question ended, a count of skipped news, and the rest of a
        message already begun."""
        announcement = item.announcement
        return (
            announcement.continues
            or item.kept
            or item.lead_for is not None
            or announcement.kind == _SESSION_STARTED
            or announcement.kind in QUESTION_END_KINDS
            # A count of what was skipped (a flood's) is never itself skipped.
            or announcement.kind == FOLDED_SUMMARY_KIND
            or _is_final(announcement)
            or (
                announcement.kind == "agent.progress.updated"
                and newest_plan.get(_source_of(announcement)) == index
            )
        )

    def _drop_stale(self, now: float) -> None:
        """Nothing older than ``stale_after_seconds`` is read as news (issue 20).

        Age counts from when the news could first be said in its source's order (after
        that source's earlier words and questions). Background news also gives way to
        newer news after ``max_delay_seconds`` and past ``max_queued_speech_seconds``.
        """
        for urgency in (Urgency.NORMAL, Urgency.BACKGROUND):
            queue = self._queues[urgency]
            stale_after = self.stale_after_seconds
            if not queue or all(now - item.eligible_at <= stale_after for item in queue):
                continue
            newest_plan = {
                _source_of(item.announcement): index
                for index, item in enumerate(queue)
                if item.announcement.kind == "agent.progress.updated"
            }
            doomed: set[int] = set()
            for message in _messages(queue):
                head = queue[message.start]
                if now - head.eligible_at > stale_after and not self._protected(
                    head, newest_plan, message.start
                ):
                    doomed.update(message)
            if doomed:
                self._drop_at(urgency, doomed, "stale", now)
        background = self._queues[Urgency.BACKGROUND]
        if len(background) < 2:
            return
        max_delay = self.max_delay_seconds
        newest_plan = {
            _source_of(item.announcement): index
            for index, item in enumerate(background)
            if item.announcement.kind == "agent.progress.updated"
        }
        doomed = set()
        messages = _messages(background)
        total = sum(item.seconds for item in background)
        for message in messages[:-1]:
            head = background[message.start]
            if self._protected(head, newest_plan, message.start):
                continue
            if now - head.queued_at > max_delay or total > self.max_queued_speech_seconds:
                doomed.update(message)
                total -= sum(background[index].seconds for index in message)
        if doomed:
            kept: deque[_Queued] = deque()
            for index, item in enumerate(background):
                if index in doomed:
                    self._drop(item.announcement, "overtaken by newer news", now)
                else:
                    kept.append(item)
            self._queues[Urgency.BACKGROUND] = kept

    def _eligible_news(self) -> int | None:
        """The index of the first normal news that may be said now in its source's order.

        Status news waits for its own source's earlier words (order within a source,
        issue 20); other sources' words do not hold it back.
        """
        normal = self._queues[Urgency.NORMAL]
        words = self._words
        for index, item in enumerate(normal):
            announcement = item.announcement
            source = _source_of(announcement)
            if announcement.continues or item.kept or not words or source is None:
                return index
            if not any(
                _source_of(said.announcement) == source and said.order < item.order
                for said in words
            ):
                return index
        return None

    def _fold_summary(self, source: str | None, now: float) -> Announcement | None:
        """ "3 more: 2 edits, 1 command." for the news folded from ``source``, if due.

        Other sources' folded news that is due too is counted in the same line: one
        summary, not one per source, so no source's own news waits behind the others'
        summaries (issue 20: status within 3 s when several agents work at once).
        """
        counts = self._folded_news.get(source)
        if not counts or all(category in _QUIET_CATEGORIES for category in counts):
            return None
        del self._folded_news[source]
        self._unfinished_starts.pop(source, None)
        items = self._folded_items.pop(source, [])
        for other in [key for key in self._folded_news if key != source]:
            others = self._folded_news[other]
            if all(category in _QUIET_CATEGORIES for category in others):
                continue
            counts = counts + others
            del self._folded_news[other]
            self._unfinished_starts.pop(other, None)
            items += self._folded_items.pop(other, [])
        language = catalog_language(self.settings.languages or ["en"])
        text = folded_summary_text(counts, language)
        named = sum(
            count for category, count in counts.items() if category not in _QUIET_CATEGORIES
        )
        lone, since = items[0] if len(items) == 1 else _UNSAYABLE
        if (
            named == 1
            and since is not None
            and now - since <= self.stale_after_seconds
            and len(lone.text) <= len(text)
        ):
            # One piece of news folded, still fresh and shorter than its count: said as
            # itself ("Shell finished." rather than "1 more: 1 command.").
            language, text = lone.language, lone.text
        return Announcement(
            text=text, language=language, kind=FOLDED_SUMMARY_KIND, session_id=source
        )

    def _said_together(self, item: _Queued, now: float) -> _Queued:
        """``item``, a final state, said once for every agent that waits with the same one.

        Issue 20: when several agents end alike ("The transfer went through." from three
        sessions at once), the listener hears "3 agents: The transfer went through." once,
        instead of the same sentence three times in a row with the last agent's final
        state waiting behind the others'. Another source's news joins only when nothing
        of that source waits before it (order within a source holds), it is a whole
        message, and it is in the listener's own language (our count is said with it).
        """
        announcement = item.announcement
        source = _source_of(announcement)
        normal = self._queues[Urgency.NORMAL]
        if source is None or not _is_final(announcement) or announcement.continues or not normal:
            return item
        language = catalog_language(self.settings.languages or ["en"])
        if _primary_language(announcement.language) != _primary_language(language):
            return item
        # Each source's earliest waiting speech: only news at the head of its source joins.
        first_order: dict[str | None, int] = {}
        for lane in (self._words, *self._queues.values()):
            for waiting in lane:
                key = _source_of(waiting.announcement)
                if waiting.order < first_order.get(key, waiting.order + 1):
                    first_order[key] = waiting.order
        joined: list[_Queued] = []
        sources = {source}
        for index, waiting in enumerate(normal):
            other = waiting.announcement
            other_source = _source_of(other)
            if (
                other_source is None
                or other_source in sources
                or other.kind != announcement.kind
                or other.text != announcement.text
                or other.language != announcement.language
                or other.continues
                or waiting.kept
                or waiting.lead_for is not None
                or first_order.get(other_source) != waiting.order
                or (index + 1 < len(normal) and normal[index + 1].announcement.continues)
            ):
                continue
            sources.add(other_source)
            joined.append(waiting)
            if other.event_id is not None:
                if len(self._said_together_sources) >= ENDED_QUESTIONS_REMEMBERED:
                    self._said_together_sources.clear()  # bounded whatever a producer sends
                self._said_together_sources[other.event_id] = other_source
        if not joined:
            return item
        ids = {id(waiting) for waiting in joined}
        self._queues[Urgency.NORMAL] = deque(w for w in normal if id(w) not in ids)
        for waiting in joined:
            self._drop(waiting.announcement, "said with other agents' same news", now)
        count = len(joined) + 1
        text = (
            translator(language)
            .ngettext("{count} agent: {text}", "{count} agents: {text}", count)
            .format(count=format_integer(count, language), text=announcement.text)
        )
        said = dataclasses.replace(
            announcement,
            text=text,
            said_for=tuple(w.announcement.event_id for w in joined if w.announcement.event_id),
        )
        seconds = estimated_seconds(text, self.settings.pace_wpm)
        return dataclasses.replace(item, announcement=said, seconds=seconds)

    def _earlier_background(self, item: _Queued, now: float) -> _Queued | None:
        """Background news of ``item``'s session that came before it (issue 14 a).

        Chatter (progress, a state change) is superseded by that newer news and dropped;
        of the rest, the oldest still fresh (``max_delay_seconds``) is returned to be said
        first, and the stale ones are moot and dropped.
        """
        session_id = item.announcement.session_id
        if session_id is None:
            return None
        background = self._queues[Urgency.BACKGROUND]
        if not any(
            waiting.announcement.session_id == session_id and waiting.order < item.order
            for waiting in background
        ):
            return None
        first: _Queued | None = None
        kept: deque[_Queued] = deque()
        for waiting in background:
            if waiting.announcement.session_id != session_id or waiting.order > item.order:
                kept.append(waiting)
            elif (
                waiting.announcement.kind in _CHATTER
                and not waiting.announcement.continues
                and self.settings.cognitive_load != "high"  # who asked for every detail
            ):
                # Progress or a state change is superseded by its session's newer news.
                self._drop(waiting.announcement, "superseded by newer news", now)
            elif first is None and now - waiting.queued_at <= self.max_delay_seconds:
                first = waiting
            elif now - waiting.queued_at <= self.max_delay_seconds:
                kept.append(waiting)  # said next, before ``item`` too
            else:
                self._drop(waiting.announcement, "overtaken by newer news", now)
        self._queues[Urgency.BACKGROUND] = kept
        return first


def _primary_language(tag: str) -> str:
    """ "en" for "en-US", "pt" for "pt_BR": whether our words and the agent's share a voice."""
    return tag.replace("_", "-").split("-", 1)[0].lower()


def _category_phrase(category: str, count: int, language: str) -> str:
    """ "2 edits", "1 command": one kind of folded status news, counted."""
    catalog = translator(language)
    if category == "edit":
        phrase = catalog.ngettext("{count} edit", "{count} edits", count)
    elif category == "command":
        phrase = catalog.ngettext("{count} command", "{count} commands", count)
    elif category == "read":
        phrase = catalog.ngettext("{count} file read", "{count} file reads", count)
    elif category == "tool":
        phrase = catalog.ngettext("{count} tool call", "{count} tool calls", count)
    elif category == "plan":
        phrase = catalog.ngettext("{count} plan step", "{count} plan steps", count)
    elif category == "state":
        phrase = catalog.ngettext("{count} state change", "{count} state changes", count)
    else:
        phrase = catalog.ngettext("{count} update", "{count} updates", count)
    return phrase.format(count=format_integer(count, language))


def folded_summary_text(counts: Counter[str], language: str) -> str:
    """ "3 more: 2 edits, 1 command." in ``language`` (issue 20: never a bare count)."""
    # State changes are counted, not named: what the agent is doing now says more. (Named
    # when nothing else was folded: a flood of them is still said by kind.)
    quiet = _QUIET_CATEGORIES if any(c not in _QUIET_CATEGORIES for c in counts) else frozenset()
    total = sum(count for category, count in counts.items() if category not in quiet)
    parts = [
        _category_phrase(category, counts[category], language)
        for category in FOLD_CATEGORIES
        if counts.get(category, 0) and category not in quiet
    ]
    return (
        translator(language)
        .ngettext("{count} more: {kinds}.", "{count} more: {kinds}.", total)
        .format(count=format_integer(total, language), kinds=format_list(parts, language))
    )
