"""What a command will do, as the user must see and hear it before it runs.

One module for every source that asks about a command (hook questions in
``formats/hooks.py``, ACP permissions in ``formats/acp_questions.py``, agent streams through
``formats/speakable.command_words``, and the display of any confirmation): a key may
authorise the command, so what the user is told must be what will run (issue 22,
"Disguise"). Sans-I/O and pure: text in, an analysis out.

- **Normalised before it is judged.** Zero-width, bidi and other invisible characters
  are taken out (and counted: the user hears that they were there), compatibility forms
  folded (NFKC: a full-width ``ｒｍ`` is ``rm``), a ``bash -lc '…'`` wrapper unwrapped,
  ``sudo``/``env``/``xargs``-style prefixes looked through, ``/bin/rm`` and ``\\rm``
  read as ``rm``, and long options read as their short forms (``--recursive --force``
  is ``-rf``).
- **Every part is judged.** A command line is cut at ``;``, ``&&``, ``||``, ``|``,
  ``&`` and newlines; ``sh -c``/``eval`` strings and ``$(…)``/backquote substitutions
  are judged as commands too. Risk follows the worst part, never the agent's own title
  or kind alone: the caller takes the higher of its own and :attr:`CommandAnalysis.risk`.
- **Said so it can be heard.** A short one-line command is read literally, with the
  symbols a voice drops named (``*``, ``_``, ``~``); a long or multi-line one is read
  as a summary of about 20 words: its length, its start, its end and every dangerous
  part, literally. :func:`whole_for_speech` reads it all, line by line, on request.
  Nothing here goes through markdown clean-up: ``dist/*`` stays ``dist/*``.
"""

from __future__ import annotations

import re
import shlex
import unicodedata
from dataclasses import dataclass
from functools import lru_cache
from typing import Final, get_args

from announcer.i18n.format import format_integer
from announcer.i18n.translate import translator
from announcer.protocol.events import RiskLevel as Risk
from announcer.protocol.sanitise import clean_display, clean_speech

_RISK_ORDER: Final = {level: rank for rank, level in enumerate(get_args(Risk))}

#: the most of a command that is analysed and kept (a bound; §3.7 events stay under 64 KiB)
MAX_COMMAND_CHARS: Final = 16_384
#: a one-line command up to this long is read whole in the question; longer is summarised
LONG_COMMAND_CHARS: Final = 100
#: a multi-line command this short, of at most this many lines, is read line by line
SHORT_LINES: Final = 3
#: words of the start and of the end said in a summary
SUMMARY_EDGE_WORDS: Final = 5
#: a word in a summary's start or end is cut to this many characters
SUMMARY_WORD_CHARS: Final = 24
#: each dangerous part is said up to this many characters
DANGEROUS_PART_CHARS: Final = 80
#: how many dangerous parts a summary names (all are shown)
SUMMARY_PARTS: Final = 3

# Invisible characters that hide or reorder what runs: zero-width (space, non-joiner,
# joiner), directional marks, bidi embeddings/overrides/isolates, word joiner and invisible
# operators, BOM, soft hyphen, Hangul fillers, Mongolian vowel separator, tag characters.
_HIDDEN: Final = re.compile(
    "[\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\U000e0000-\U000e007f]"
)
_SHELLS: Final = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "ash", "busybox"})
_INTERPRETERS: Final = _SHELLS | frozenset(
    {"python", "python3", "perl", "ruby", "node", "php", "pwsh", "powershell"}
)
# Words that run the rest of their line as a command; how many option values they take.
_PREFIXES: Final = frozenset(
    {
        "sudo", "doas", "env", "nohup", "nice", "ionice", "time", "command", "builtin",
        "exec", "timeout", "stdbuf", "xargs", "chroot", "unbuffer", "caffeinate", "then",
        "do", "else", "!", "{", "(",
    }
)  # fmt: skip
_PREFIX_VALUE_OPTIONS: Final = {
    "sudo": frozenset({"-u", "-g", "-h", "-p", "-C", "-r", "-t", "-U"}),
    "nice": frozenset({"-n"}),
    "ionice": frozenset({"-c", "-n", "-p"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "xargs": frozenset({"-I", "-n", "-P", "-L", "-d", "-a", "-E", "-s"}),
    "env": frozenset({"-u", "-C", "-S"}),
}
_READ_ONLY: Final = frozenset(
    {
        "ls", "cat", "head", "tail", "wc", "pwd", "echo", "printf", "grep", "egrep", "fgrep",
        "rg", "ag", "which", "whoami", "date", "stat", "file", "du", "df", "tree", "sort",
        "uniq", "cut", "less", "more", "true", "false", "test", "[", "basename", "dirname",
        "realpath", "readlink", "uname", "id", "hostname", "ps", "jq", "diff", "cmp",
        "md5sum", "sha1sum", "sha256sum", "nl", "tr", "column", "type", "cd", "fd",
        "printenv", "locale", "sleep", "seq", "yes", "tac", "rev", "od", "hexdump", "xxd",
    }
)  # fmt: skip
_READ_ONLY_GIT: Final = frozenset(
    {"status", "log", "diff", "show", "rev-parse", "ls-files", "grep", "blame", "describe",
     "shortlog", "remote", "config", "ls-tree", "cat-file", "reflog"}
)  # fmt: skip
_NETWORK: Final = frozenset(
    {"curl", "wget", "nc", "ncat", "netcat", "socat", "scp", "sftp", "ftp", "rsync", "ssh",
     "telnet", "http", "https", "xh", "aria2c"}
)  # fmt: skip
_DELETERS: Final = frozenset({"rm", "rmdir", "unlink", "shred", "srm", "trash", "wipe"})
_DISK_WRITERS: Final = frozenset({"mkfs", "wipefs", "fdisk", "sfdisk", "parted", "mkswap"})
_POWER: Final = frozenset({"shutdown", "reboot", "halt", "poweroff"})
# Places whose contents are secrets: sent anywhere, they are gone for good.
_SECRET: Final = re.compile(
    r"\.ssh\b|id_(?:rsa|dsa|ecdsa|ed25519)|\.aws\b|\.gnupg\b|\.netrc\b|\.git-credentials"
    r"|\.kube/config|\.docker/config|/etc/(?:shadow|sudoers)|\.env\b|\.npmrc\b|\.pypirc\b"
    r"|credentials|\bsecrets?\b|\btokens?\b|private[_-]?key",
    re.IGNORECASE,
)
_SQL_DESTRUCTIVE: Final = re.compile(
    r"\b(?:drop\s+(?:table|database|schema|index|view)|truncate\s+table"
    r"|delete\s+from\s+\S+\s*(?:;|$|\"|'))",
    re.IGNORECASE,
)
_DISK_DEVICE: Final = re.compile(r"^/dev/(?:sd|nvme|disk|hd|mmcblk|vd|xvd)")
_FORK_BOMB: Final = re.compile(r":\s*\(\s*\)\s*\{[^}]*:\s*\|\s*:")
_SUBSTITUTION: Final = re.compile(r"\$\(([^()]*)\)|`([^`]*)`|<\(([^()]*)\)")
_SHELL_WRAPPER: Final = re.compile(
    r"^\s*(?:\S*/)?(?:ba|z|da|k)?sh\s+(?:-[a-z]*c[a-z]*)\s+(?P<rest>.+)$", re.DOTALL
)
_ASSIGNMENT: Final = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_SEPARATORS: Final = frozenset({";", "&&", "||", "|", "&", "|&", ";;", "(", ")", "\n"})
_LONG_OPTIONS: Final = {
    "--recursive": "r",
    "--force": "f",
    "--dir": "d",
    "--no-preserve-root": "f",
    "--hard": "hard",
    "--delete": "delete",
    "--force-with-lease": "f",
    "--mirror": "f",
}


@dataclass(frozen=True, slots=True)
class CommandAnalysis:
    """A command as it will run, normalised, with what makes it dangerous."""

    #: the command as the agent sent it (bounded)
    original: str
    #: what the shell will see, invisible characters out, compatibility forms folded
    normalised: str
    #: invisible characters taken out (zero-width, bidi...): the user is told
    hidden: int
    #: the parts that delete, overwrite, publish or send away, literally
    dangerous: tuple[str, ...]
    #: why (stable codes: ``delete``, ``send_secret``, ``run_download``...)
    reasons: frozenset[str]
    risk: Risk
    irreversible: bool

    @property
    def lines(self) -> list[str]:
        """Its non-empty lines, each stripped."""
        return [line.strip() for line in self.normalised.split("\n") if line.strip()]

    @property
    def is_long(self) -> bool:
        """Read as a summary (with a key for the whole) rather than literally."""
        lines = self.lines
        if len(lines) > 1:
            return len(lines) > SHORT_LINES or len(self.normalised) > LONG_COMMAND_CHARS
        return len(self.normalised) > LONG_COMMAND_CHARS


def higher_risk(*risks: str | None) -> Risk:
    """The highest of several risk levels (unknown values count as medium)."""
    best: Risk = "low"
    for risk in risks:
        level: Risk = risk if risk in _RISK_ORDER else "medium"  # type: ignore[assignment]
        if _RISK_ORDER[level] > _RISK_ORDER[best]:
            best = level
    return best


def normalise(command: str) -> tuple[str, int]:
    """``(text the shell sees, how many invisible characters were taken out)``."""
    text = command[:MAX_COMMAND_CHARS].replace("\r\n", "\n").replace("\r", "\n")
    text = text.replace("\u2028", "\n").replace("\u2029", "\n")
    hidden = len(_HIDDEN.findall(text))
    text = _HIDDEN.sub("", text)
    text = unicodedata.normalize("NFKC", text)
    return unwrap_shell(text), hidden


def unwrap_shell(command: str) -> str:
    """``/bin/bash -lc 'ls -la'`` -> ``ls -la``: the wrapper is the agent's, not the user's."""
    match = _SHELL_WRAPPER.match(command)
    if match is None:
        return command
    rest = match.group("rest").strip()
    try:
        words = shlex.split(rest)
    except ValueError:
        return command
    return words[0] if len(words) == 1 else command


@lru_cache(maxsize=512)
def analyse(command: str) -> CommandAnalysis:
    """What ``command`` will do: normalised, cut into parts, each part judged."""
    original = command[:MAX_COMMAND_CHARS]
    normalised, hidden = normalise(original)
    found = _Findings()
    _judge_script(normalised, found, depth=0)
    if _SQL_DESTRUCTIVE.search(normalised):
        found.add("sql_destructive", _around(normalised, _SQL_DESTRUCTIVE), irreversible=True)
    if _FORK_BOMB.search(normalised):
        found.add("fork_bomb", _around(normalised, _FORK_BOMB), irreversible=False)
    risk: Risk = "high" if found.parts or found.high else found.risk
    if hidden and risk == "low":
        risk = "medium"  # a hidden character in a command is never "low risk"
    if len([line for line in normalised.split("\n") if line.strip()]) > 1 and risk == "low":
        risk = "medium"
    return CommandAnalysis(
        original=original,
        normalised=normalised.strip(),
        hidden=hidden,
        dangerous=tuple(dict.fromkeys(found.parts)),
        reasons=frozenset(found.reasons),
        risk=risk,
        irreversible=found.irreversible,
    )


# Words that start a command worth looking for inside prose ("Permission requested: Bash —
# rm -rf build/"): where a source gives no command field, what follows each is judged.
_TRIGGERS: Final = (
    _DELETERS
    | _DISK_WRITERS
    | _POWER
    | frozenset({"git", "dd", "find", "sudo", "doas", "curl", "wget", "chmod", "chown",
                 "truncate", "xargs", "eval", "bash", "sh", "zsh", "scp", "rsync", "nc"})
)  # fmt: skip
_PROSE_WORD: Final = re.compile(r"[^\s`'\"“”‘’«»]+")


def scan_text(text: str) -> CommandAnalysis | None:
    """The most dangerous command found inside prose, or None (no dangerous part found).

    For questions whose source names no command (AAEP producers, AEP permissions): each
    line is read from every word that starts a known command, up to the line's end."""
    text = _HIDDEN.sub("", unicodedata.normalize("NFKC", text[:MAX_COMMAND_CHARS]))
    worst: CommandAnalysis | None = None
    for line in text.replace("\r", "\n").split("\n"):
        for match in _PROSE_WORD.finditer(line):
            word = match.group(0).strip(".,;:()[]{}")
            pathed = word.startswith(("/", "\\")) and _basename(word) in _TRIGGERS  # /bin/rm
            if word not in _TRIGGERS and not pathed:
                continue
            rest = line[match.start() :].replace("`", " ").strip().rstrip(".?!,;:'\"")
            found = analyse(rest)
            if found.dangerous and (worst is None or len(found.dangerous) > len(worst.dangerous)):
                worst = found
        found = analyse(line)
        if found.reasons & {"sql_destructive", "fork_bomb"} and worst is None:
            worst = found
    return worst


class _Findings:
    def __init__(self) -> None:
        self.parts: list[str] = []
        self.reasons: set[str] = set()
        self.irreversible = False
        self.high = False
        self.risk: Risk = "low"

    def add(self, reason: str, part: str, *, irreversible: bool) -> None:
        self.reasons.add(reason)
        self.parts.append(_clip(" ".join(part.split()), DANGEROUS_PART_CHARS))
        self.irreversible = self.irreversible or irreversible
        self.high = True

    def at_least(self, risk: Risk) -> None:
        self.risk = higher_risk(self.risk, risk)


def _around(text: str, pattern: re.Pattern[str]) -> str:
    match = pattern.search(text)
    return match.group(0) if match else text


def _tokens(script: str) -> list[str]:
    """Shell words and operators; newlines are operators. Quotes are removed as the
    shell would. A line the shell could not read is cut at blanks (judged all the same)."""
    lexer = shlex.shlex(script.replace("\n", " \n "), posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace = " \t"
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)
    except ValueError:
        rough = re.split(r"(\n|&&|\|\||[;|&()])", script)
        return [word for part in rough for word in (part.split() if part != "\n" else [part])]


def _judge_script(script: str, found: _Findings, depth: int) -> None:
    if depth > 4 or not script.strip():
        return
    for inner in _SUBSTITUTION.finditer(script):
        _judge_script(next(g for g in inner.groups() if g is not None), found, depth + 1)
    tokens = _tokens(script)
    pipeline: list[list[str]] = []
    current: list[str] = []
    for token in [*tokens, ";"]:
        if token in _SEPARATORS or token in ("<", ">", ">>", "<<", ">&", "<&", ">|"):
            if token in ("<", ">", ">>", "<<", ">&", "<&", ">|"):
                current.append(token)
                continue
            if current:
                pipeline.append(current)
            current = []
            if token not in ("|", "|&"):
                _judge_pipeline(pipeline, found, depth)
                pipeline = []
            continue
        current.append(token)


def _judge_pipeline(pipeline: list[list[str]], found: _Findings, depth: int) -> None:
    downloads = False
    for words in pipeline:
        name, args = _command_of(words)
        if not name:
            continue
        if (
            downloads
            and name in _INTERPRETERS
            and not any(a.endswith((".py", ".sh")) for a in args)
        ):
            found.add("run_download", " | ".join(" ".join(w) for w in pipeline), irreversible=True)
        if name in ("curl", "wget"):
            downloads = True
        _judge_command(name, args, words, found, depth)


def _command_of(words: list[str]) -> tuple[str, list[str]]:
    """The command a simple command runs, looking through ``sudo``, ``env`` and the like."""
    index = 0
    while index < len(words):
        word = words[index]
        if _ASSIGNMENT.match(word):  # FOO=1 rm -rf ~
            index += 1
            continue
        name = _basename(word)
        if name in _PREFIXES:
            values = _PREFIX_VALUE_OPTIONS.get(name, frozenset())
            index += 1
            if name == "timeout" and index < len(words) and not words[index].startswith("-"):
                index += 1  # its duration
            while index < len(words) and words[index].startswith("-"):
                option = words[index]
                index += 2 if option in values else 1
            while index < len(words) and _ASSIGNMENT.match(words[index]):
                index += 1
            continue
        return name, words[index + 1 :]
    return "", []


def _basename(word: str) -> str:
    return word.lstrip("\\").rsplit("/", 1)[-1]


def _flags(args: list[str]) -> set[str]:
    """Short flags as letters, long options as their short forms where they have one."""
    flags: set[str] = set()
    for arg in args:
        if arg == "--":
            break
        if arg.startswith("--"):
            name = arg.split("=", 1)[0]
            flags.add(_LONG_OPTIONS.get(name, name))
        elif arg.startswith("-") and len(arg) > 1:
            flags.update(arg[1:])
    return flags


def _judge_command(
    name: str, args: list[str], words: list[str], found: _Findings, depth: int
) -> None:
    part = " ".join(words)
    text = " ".join(args)
    elevated = any(_basename(w) in ("sudo", "doas") for w in words[:2])
    if elevated:
        found.add("as_administrator", part, irreversible=False)
    if name in _SHELLS or name == "eval":
        script = ""
        if name == "eval":
            script = text
        elif "-c" in args or any(a.startswith("-") and "c" in a[1:] for a in args[:2]):
            after = next(
                (i for i, a in enumerate(args) if a.startswith("-") and "c" in a.lstrip("-")), -1
            )
            script = args[after + 1] if 0 <= after < len(args) - 1 else ""
        if script:
            _judge_script(script, found, depth + 1)
        found.at_least("medium")
        return
    if name in ("ssh",) and len([a for a in args if not a.startswith("-")]) >= 2:
        _judge_script(" ".join(a for a in args[1:] if not a.startswith("-")), found, depth + 1)
    if name in _DELETERS:
        found.add("delete", part, irreversible=True)
        return
    if name.startswith("mkfs") or name in _DISK_WRITERS:
        found.add("erase_disk", part, irreversible=True)
        return
    if name == "dd" and any(a.startswith("of=") for a in args):
        found.add("overwrite_disk", part, irreversible=True)
        return
    if name == "truncate" or (name == "mv" and "/dev/null" in args):
        found.add("delete", part, irreversible=True)
        return
    if name in _POWER or (name == "init" and args[:1] in (["0"], ["6"])):
        found.add("power", part, irreversible=False)
        return
    if name == "find":
        if "-delete" in args or any(a in ("-exec", "-execdir", "-ok", "-okdir") for a in args):
            at = next(
                (i for i, a in enumerate(args) if a in ("-exec", "-execdir", "-ok", "-okdir")), -1
            )
            if "-delete" in args:
                found.add("delete", part, irreversible=True)
            elif at >= 0:
                inner = [a for a in args[at + 1 :] if a not in (";", "+", "{}", "\\;")]
                inner_name, inner_args = _command_of(inner)
                before = len(found.parts)
                _judge_command(inner_name, inner_args, inner, found, depth + 1)
                if len(found.parts) > before:
                    found.parts[-1] = _clip(part, DANGEROUS_PART_CHARS)
                found.at_least("medium")
            return
        return
    if name == "git":
        _judge_git(args, part, found)
        return
    if name in ("chmod", "chown", "chgrp") and ("R" in _flags(args) or "r" in _flags(args)):
        found.add("permissions", part, irreversible=False)
        return
    if name in _NETWORK:
        _judge_network(name, args, part, found)
        return
    if name in ("kill", "pkill", "killall"):
        found.at_least("medium")
        return
    if name in ("sed", "perl") and any(a.startswith("-i") or a.startswith("-pi") for a in args):
        found.at_least("medium")
        return
    for index, word in enumerate(words[:-1]):
        if word in (">", ">>", ">|") and re.match(
            r"^/dev/(?:sd|nvme|disk|hd|mmcblk)", words[index + 1]
        ):
            found.add("overwrite_disk", part, irreversible=True)
            return
    writes = any(word in (">", ">>", ">|") for word in words)
    if name in _READ_ONLY and not writes:
        return
    found.at_least("medium")


def _judge_git(args: list[str], part: str, found: _Findings) -> None:
    sub = next((a for a in args if not a.startswith("-")), "")
    rest = args[args.index(sub) + 1 :] if sub in args else []
    flags = _flags(rest)
    if sub == "push" and (
        "f" in flags or "delete" in flags or "d" in flags
        or any(a.startswith("+") or a.startswith(":") for a in rest)
    ):  # fmt: skip
        found.add("force_push", part, irreversible=True)
    elif sub == "reset" and "hard" in flags:
        found.add("discard_changes", part, irreversible=True)
    elif (sub == "clean" and "f" in flags) or (
        sub == "branch" and ("D" in flags or ("d" in flags and "f" in flags))
    ):
        found.add("delete", part, irreversible=True)
    elif sub in ("checkout", "restore") and ("." in rest or "--" in rest) and "b" not in flags:
        found.add("discard_changes", part, irreversible=True)
    elif sub == "stash" and rest[:1] in (["drop"], ["clear"]):
        found.add("delete", part, irreversible=True)
    elif sub in ("filter-branch", "filter-repo"):
        found.add("rewrite_history", part, irreversible=True)
    elif sub in _READ_ONLY_GIT or not sub:
        return
    else:
        found.at_least("medium")


def _judge_network(name: str, args: list[str], part: str, found: _Findings) -> None:
    found.at_least("medium")
    uploads = False
    for index, arg in enumerate(args):
        option = arg.split("=", 1)[0]
        value = (
            arg.split("=", 1)[1]
            if "=" in arg
            else (args[index + 1] if index + 1 < len(args) else "")
        )
        if name in ("curl", "xh", "http", "https") and (
            option in ("-d", "--data", "--data-binary", "--data-raw", "--data-urlencode",
                       "--json", "-F", "--form", "-T", "--upload-file")
            or (option.startswith("-d") and len(option) > 2)
            or (option.startswith("-F") and len(option) > 2)
        ):  # fmt: skip
            attached = arg[2:] if option.startswith(("-d", "-F")) and len(option) > 2 else value
            if "@" in attached or option in ("-T", "--upload-file") or _SECRET.search(attached):
                uploads = True
        if name == "wget" and option in ("--post-file", "--body-file"):
            uploads = True
    if name in ("scp", "rsync", "sftp", "nc", "ncat", "netcat", "socat") and _SECRET.search(
        " ".join(args)
    ):
        uploads = True
    if uploads:
        secret = bool(_SECRET.search(" ".join(args)))
        found.add("send_secret" if secret else "send_file", part, irreversible=True)


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


# -- what the user sees and hears ------------------------------------------------------


def _symbol_name(symbol: str, language: str) -> str:
    tr = translator(language)
    if symbol == "*":
        return tr.pgettext("a symbol in a command, read aloud", "star")
    if symbol == "_":
        return tr.pgettext("a symbol in a command, read aloud", "underscore")
    return tr.pgettext("a symbol in a command, read aloud", "tilde")


_NAMED: Final = re.compile(r"[*_~]")
_STOP_AFTER_NAME: Final = re.compile(r"[.,;:!?](?:\s|$)")


def literal_for_speech(text: str, language: str = "en") -> str:
    """Text read exactly as written: safe for a synthesiser, the symbols a voice drops
    named (``dist/*`` is "dist/ star"), never markdown-cleaned, on one line."""
    safe = clean_speech(_HIDDEN.sub("", text))

    def name(match: re.Match[str]) -> str:
        # a sentence's own stop stays with the name before it ("rm -rf tilde.")
        after = "" if _STOP_AFTER_NAME.match(safe, match.end()) else " "
        return f" {_symbol_name(match.group(0), language)}{after}"

    return " ".join(_NAMED.sub(name, safe).split())


def for_display(analysis: CommandAnalysis) -> str:
    """The whole command to show, line by line, nothing that acts on a terminal."""
    return clean_display(analysis.normalised)


def _edge(words: list[str]) -> str:
    return " ".join(_clip(word, SUMMARY_WORD_CHARS) for word in words)


def summary(analysis: CommandAnalysis, language: str = "en") -> str:
    """About 20 words: length, start, end, every dangerous part, hidden characters.

    Not yet made speakable (the caller reads it with :func:`literal_for_speech`)."""
    tr = translator(language)
    count = len(analysis.normalised)
    lines = analysis.lines
    parts = [
        tr.ngettext(
            "A long command, {count} character.", "A long command, {count} characters.", count
        ).format(count=format_integer(count, language))
    ]
    if len(lines) > 1:
        parts.append(
            tr.ngettext("{count} line.", "{count} lines.", len(lines)).format(
                count=format_integer(len(lines), language)
            )
        )
    words = analysis.normalised.split()
    start = words[:SUMMARY_EDGE_WORDS]
    end = words[-SUMMARY_EDGE_WORDS:] if len(words) > SUMMARY_EDGE_WORDS else []
    parts.append(tr.gettext("It starts: {start}").format(start=_edge(start)) + ".")
    if end:
        parts.append(tr.gettext("It ends: {end}").format(end=_edge(end)) + ".")
    parts += _dangerous_and_hidden(analysis, language, SUMMARY_PARTS)
    return " ".join(parts)


def _dangerous_and_hidden(
    analysis: CommandAnalysis, language: str, limit: int, *, spoken: bool = False
) -> list[str]:
    tr = translator(language)
    parts: list[str] = []
    dangerous = list(analysis.dangerous)
    if spoken:
        dangerous = [literal_for_speech(part, language) for part in dangerous]
    if dangerous:
        named = "; ".join(dangerous[:limit])
        if len(dangerous) > limit:
            more = len(dangerous) - limit
            named += "; " + tr.ngettext("{count} more", "{count} more", more).format(
                count=format_integer(more, language)
            )
        parts.append(tr.gettext("Dangerous: {parts}").format(parts=named) + ".")
    if analysis.hidden:
        parts.append(
            tr.ngettext(
                "It had {count} hidden character, taken out here.",
                "It had {count} hidden characters, taken out here.",
                analysis.hidden,
            ).format(count=format_integer(analysis.hidden, language))
        )
    return parts


def in_question(analysis: CommandAnalysis, language: str = "en") -> str:
    """The command as a question names it: literally when short, else its summary.

    A short multi-line command is read line by line ("line 1: …"), never as one line."""
    lines = analysis.lines
    if analysis.is_long:
        return summary(analysis, language)
    tr = translator(language)
    if len(lines) > 1:
        text = tr.ngettext("{count} line:", "{count} lines:", len(lines)).format(
            count=format_integer(len(lines), language)
        )
        said = "; ".join(
            tr.gettext("line {number}: {text}").format(
                number=format_integer(number, language), text=line
            )
            for number, line in enumerate(lines, start=1)
        )
        text = f"{text} {said}"
    else:
        text = lines[0] if lines else ""
    extra = _dangerous_and_hidden(analysis, language, SUMMARY_PARTS) if analysis.hidden else []
    return " ".join([text, *extra]).strip()


def whole_for_speech(analysis: CommandAnalysis, language: str = "en") -> str:
    """The whole command, literally, line by line, symbols named: the read-whole key."""
    tr = translator(language)
    lines = analysis.lines
    if len(lines) <= 1:
        said = literal_for_speech(lines[0] if lines else "", language)
    else:
        said = " ".join(
            tr.gettext("line {number}: {text}").format(
                number=format_integer(number, language), text=literal_for_speech(line, language)
            )
            for number, line in enumerate(lines, start=1)
        )
    extra = _dangerous_and_hidden(analysis, language, len(analysis.dangerous) or 1, spoken=True)
    return clean_speech(" ".join([said, *extra])).strip()


__all__ = [
    "LONG_COMMAND_CHARS",
    "CommandAnalysis",
    "analyse",
    "for_display",
    "higher_risk",
    "in_question",
    "literal_for_speech",
    "normalise",
    "summary",
    "unwrap_shell",
    "whole_for_speech",
]
