"""Several agents in one session: addressing, the user's messages to them, and cancel.

``announcer agent`` and ``listen acp:NAME`` run ACP agents as sources the user can type
to. A message without ``@NAME`` goes to the agent last addressed; ``:to NAME`` changes
that; ``:cancel`` stops one agent's turn. The session owns the desk and hands it its
callbacks (the transports, its voice, its catalog); this module never imports the
session.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from announcer.transports.base import AgentLink, Transport


class AgentDesk:
    """Which agent a message goes to, and what the user hears about it.

    ``transports`` lists the session's sources in the order named; ``speak(text,
    interrupt)`` says our sentence; ``t`` translates it; ``waiting(source_id)`` counts
    the questions that agent waits on.
    """

    def __init__(
        self,
        transports: Callable[[], list[Transport]],
        speak: Callable[[str, bool], None],
        t: Callable[[str], str],
        waiting: Callable[[str | None], int],
        wrote: Callable[[AgentLink], None] | None = None,
    ) -> None:
        self._transports = transports
        self._speak = speak
        self._t = t
        self._waiting = waiting
        # told of each message that went out now, after its echo (issue 31, item 11)
        self._wrote = wrote
        # Where a message without @NAME goes (several agents): the one last addressed.
        self._prompt_target: AgentLink | None = None
        self.prompt_taken = False  # whether the last message went (or waits to go) out

    def agents(self) -> list[AgentLink]:
        """The sources the user can type to, in the order named (AAEP producers take none)."""
        return [agent for t in self._transports() if (agent := t.agent()) is not None]

    @property
    def takes_prompts(self) -> bool:
        return bool(self.agents())

    def find_agent(self, name: str) -> AgentLink | None:
        """The agent called ``name`` (its short name or title, any case, or a unique start)."""
        wanted = name.strip().lstrip("@").casefold()
        agents = self.agents()
        for agent in agents:
            if wanted in (_agent_name(agent).casefold(), str(agent.description).casefold()):
                return agent
        starting = [a for a in agents if _agent_name(a).casefold().startswith(wanted)]
        return starting[0] if wanted and len(starting) == 1 else None

    def prompt_target(self) -> AgentLink | None:
        """Where a message without ``@NAME`` goes: the agent last addressed, else the first."""
        agents = self.agents()
        target = self._prompt_target
        if target in agents:
            return target
        return agents[0] if agents else None

    def set_prompt_target(self, name: str) -> str | None:
        """``:to NAME``: later messages go to that agent; the sentence said back."""
        agents = self.agents()
        if not agents:
            return None
        agent = self.find_agent(name)
        if agent is None:
            said = self._no_such_agent(name)
        else:
            self._prompt_target = agent
            said = self._t("Messages now go to {agent}.").format(agent=agent.description)
        self._speak(said, False)
        return said

    def address_agent(self, name: str) -> str | None:
        """``@NAME`` or ``:to NAME`` with no message: switch to that agent; with no name
        (``@``, ``:to``, ``:agents``), say where messages go. The sentence said, or None
        when no agent runs here."""
        return self.set_prompt_target(name) if name else self.describe_agents()

    def describe_agents(self) -> str | None:
        """``:to`` alone or ``:agents``: where messages go and what each agent is doing."""
        agents = self.agents()
        if not agents:
            return None
        target = self.prompt_target()
        assert target is not None  # there are agents
        parts = [self._t("Messages go to {agent}.").format(agent=target.description)]
        if len(agents) > 1:
            states = "; ".join(f"{a.description}: {self._agent_state(a)}" for a in agents)
            parts.append(self._t("Agents: {list}.").format(list=states))
        said = " ".join(parts)
        self._speak(said, False)
        return said

    def _agent_state(self, agent: AgentLink) -> str:
        if agent.stopped:
            return self._t("stopped")
        if agent.busy:
            waiting = self._waiting(agent.source_id)
            if waiting:
                return self._t("waiting for your answer")
            return self._t("working")
        if not agent.ready:
            return self._t("starting")
        return self._t("ready")

    def _no_such_agent(self, name: str) -> str:
        names = ", ".join(_agent_name(a) for a in self.agents())
        return self._t("No agent is called {name}. The agents are: {names}.").format(
            name=name.strip(), names=names
        )

    def send_prompt(
        self, text: str, target: str | None = None, *, stop_key: str = ""
    ) -> str | None:
        """Send the user's words to one agent; the sentence said back, or None with no agent.

        ``target`` (``@NAME``) picks the agent and makes it the one later messages go to;
        without it the message goes to :meth:`prompt_target`. Only that agent gets it.
        What was sent is said back briefly (its first words); ``stop_key`` names the key
        that stops a turn in the caller's interface (default: ``:cancel``).
        :attr:`prompt_taken` says whether the message went (or waits to go) out.
        """
        self.prompt_taken = False
        if not self.agents():
            return None
        agent = self.prompt_target() if target is None else self.find_agent(target)
        if agent is None:
            said = self._no_such_agent(target or "")
            self._speak(said, False)
            return said
        if target is not None:
            self._prompt_target = agent
        name = agent.description
        ready = agent.ready
        if agent.stopped:
            said = self._t("{agent} has stopped; nothing was sent.").format(agent=name)
        elif agent.busy and stop_key:
            said = self._t("{agent} is still working. Press {key} to stop it.").format(
                agent=name, key=stop_key
            )
        elif agent.busy:
            said = self._t("{agent} is still working. Type :cancel to stop it.").format(agent=name)
        elif agent.prompt(text):
            self.prompt_taken = True
            said = (
                self._t("Sent to {agent}: {words}")
                if ready
                else self._t("{agent} is starting; your message goes as soon as it is ready.")
            ).format(agent=name, words=_first_words(text))
        else:
            said = self._t("{agent} is not ready for a message.").format(agent=name)
        self._speak(said, False)
        if self.prompt_taken and ready and self._wrote is not None:
            # after the echo, which may have cut off the agent's start news: moot now
            self._wrote(agent)
        return said

    async def cancel_turn(self, target: str | None = None) -> str | None:
        """``session/cancel``: stop one agent's turn (``:cancel [NAME]``); the sentence said."""
        if not self.agents():
            return None
        agent = self.prompt_target() if target is None else self.find_agent(target)
        if agent is None:
            said = self._no_such_agent(target or "")
        elif await agent.cancel_turn():
            said = self._t("Stopping {agent}.").format(agent=agent.description)
        else:
            said = self._t("{agent} is not working on anything.").format(agent=agent.description)
        self._speak(said, True)
        return said

    async def change_setting(self, kind: str, wanted: str) -> str | None:
        """``:mode [NAME]`` / ``:model [NAME]`` for the agent messages go to.

        With no name, the current value and the choices are said; a change is said from
        the agent's own answer. The sentence said here (a listing or a refusal), or None
        when no agent runs.
        """
        agent = self.prompt_target()
        if agent is None:
            return None
        said = str(await agent.change_setting(kind, wanted))
        if said:
            self._speak(said, True)
        return said

    async def agent_sessions(self, choice: str = "") -> str | None:
        """``:sessions`` / ``:sessions N``: list or resume the target agent's sessions."""
        agent = self.prompt_target()
        if agent is None:
            return None
        said = str(await agent.sessions(choice))
        if said:
            self._speak(said, True)
        return said

    def agent_settings(self) -> list[tuple[str, str, str, bool]]:
        """The target agent's mode and config choices: (setting, value, label, current)."""
        agent = self.prompt_target()
        return list(agent.setting_rows()) if agent is not None else []

    def agent_commands(self, target: str | None = None) -> list[tuple[str, str]]:
        """An agent's slash commands, as it last listed them (the target's by default)."""
        agent = self.prompt_target() if target is None else self.find_agent(target)
        return list(agent.commands()) if agent is not None else []

    def agent_suggestions(self, target: str | None = None) -> list[str]:
        """The prompts an agent last suggested sending next (issue 33, item 5)."""
        agent = self.prompt_target() if target is None else self.find_agent(target)
        return list(agent.suggestions()) if agent is not None else []


def _first_words(text: str, count: int = 8) -> str:
    """A message said back briefly: its first words, and an ellipsis if there is more."""
    words = text.split()
    return " ".join(words[:count]) + ("…" if len(words) > count else "")


def _agent_name(agent: AgentLink) -> str:
    """The short name the user types after ``@``: the label given, else the agent's name."""
    return agent.label or agent.description
