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
        "do", "else", "!", "{", "(", "setsid", "fakeroot", "watch", "strace", "ltrace",
        "firejail", "unshare", "proot", "chronic", "flatpak-spawn", "systemd-run", "npx",
        "bunx", "pnpx", "uvx",
    }
)  # fmt: skip
_PREFIX_VALUE_OPTIONS: Final = {
    "sudo": frozenset({"-u", "-g", "-h", "-p", "-C", "-r", "-t", "-U"}),
    "nice": frozenset({"-n"}),
    "ionice": frozenset({"-c", "-n", "-p"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "xargs": frozenset({"-I", "-n", "-P", "-L", "-d", "-a", "-E", "-s"}),
    "env": frozenset({"-u", "-C"}),
    "exec": frozenset({"-a"}),
    "watch": frozenset({"-n", "-d", "--interval"}),
    "npx": frozenset({"-p", "--package", "-c", "--call"}),
    "uvx": frozenset({"--from", "--with", "-p", "--python"}),
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
_DELETERS: Final = frozenset(
    {"rm", "rmdir", "unlink", "shred", "srm", "trash", "trash-put", "wipe", "rimraf", "del",
     "rmtrash"}
)  # fmt: skip
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

# -- what announcer cannot read in full (issue 29) ---------------------------------------
# A command is judged by what it will do. When announcer cannot know that from the text,
# the command is high risk, whatever its words look like: the list of tricks below is a
# test of that rule, not the rule. Each code has a short "why" (:func:`why_sentences`).
UNREADABLE: Final = (
    "cut",  # not all of it was seen or checked
    "hidden",  # invisible characters were taken out
    "decoded",  # it runs text it decodes first ($'\x72m', base64 -d | sh)
    "piped_program",  # a shell or interpreter runs text piped or fed into it
    "runtime_name",  # the program is named by a variable or a substitution ($X, $(...))
    "pattern_name",  # the program is a glob or a brace list (/bin/r?, {rm,-rf,~})
    "strange_name",  # the program's name has characters no command name has
    "one_liner",  # python -c, perl -e, node -e...: code announcer does not read
    "alias",  # a command name defined on the same line (alias, git -c alias.x=!...)
    "nested",  # substitutions nested deeper than announcer follows
    "run_download",  # it runs what it downloads
)
_ANSI_C_ESCAPE: Final = re.compile(r"\$'[^']*\\")
#: a program's name as a person types one; anything else is built, matched or disguised
_PLAIN_NAME: Final = re.compile(r"^[A-Za-z0-9_.+@%:,-]+$")
_GROUPING: Final = frozenset({"[", "[[", "]]", "!", "{", "}", ":", "."})
_PYTHON: Final = re.compile(r"^(?:python|pypy)\d*(?:\.\d+)?$")
# Interpreters of languages announcer does not read, and the options that take code.
_CODE_OPTIONS: Final = {
    "python": frozenset({"-c"}),
    "perl": frozenset({"-e", "-E"}),
    "ruby": frozenset({"-e"}),
    "node": frozenset({"-e", "--eval", "-p", "--print"}),
    "nodejs": frozenset({"-e", "--eval", "-p", "--print"}),
    "bun": frozenset({"-e", "--eval", "-p", "--print"}),
    "deno": frozenset({"eval"}),
    "php": frozenset({"-r"}),
    "lua": frozenset({"-e"}),
    "pwsh": frozenset({"-c", "-command", "-encodedcommand", "-e", "-ec"}),
    "powershell": frozenset({"-c", "-command", "-encodedcommand", "-e", "-ec"}),
    "osascript": frozenset({"-e"}),
    "rscript": frozenset({"-e"}),
    "julia": frozenset({"-e", "--eval"}),
    "tclsh": frozenset(),
    "mongo": frozenset({"--eval"}),
    "mongosh": frozenset({"--eval"}),
}
_AWKS: Final = frozenset({"awk", "gawk", "mawk", "nawk", "busybox-awk"})
# Programs that turn their input into other text: piped into a shell, what runs was decoded.
_DECODERS: Final = frozenset(
    {"base64", "base32", "basenc", "xxd", "openssl", "gunzip", "zcat", "gzip", "bzip2",
     "bunzip2", "xz", "unxz", "zstd", "uudecode", "rev", "tr", "iconv", "recode", "printf",
     "echo", "sed", "awk", "perl", "python", "python3", "od", "dd", "tac", "cut"}
)  # fmt: skip
_REDIRECT: Final = re.compile(r"^[0-9]*(?:>|>>|>\||&>|&>>|>&)$")
#: files that, overwritten or appended to, change what runs later or who gets in
_SENSITIVE_FILE: Final = re.compile(
    r"^(?:(?:~|\$HOME|\$\{HOME\}|/root|/home/[^/]+)/\.[^/]"
    r"|/etc/|/boot/|/(?:usr|bin|sbin|lib|lib64|var/spool/cron)/)"
    r"|authorized_keys|\.(?:bash|zsh)rc$|\.profile$|crontab"
)
_NETWORK_DEVICE: Final = re.compile(r"^/dev/(?:tcp|udp)/")
# Destructive families said by a program's own subcommand (kubectl delete, terraform
# destroy, docker system prune, npm publish, heroku apps:destroy, aws ec2 terminate-...).
_DESTROY_WORDS: Final = frozenset(
    {"delete", "destroy", "prune", "purge", "drop", "wipe", "erase", "nuke", "terminate",
     "flushall", "flushdb", "dropdb", "dropuser", "undefine", "uninstall", "teardown"}
)  # fmt: skip
_PUBLISH_WORDS: Final = frozenset({"publish", "unpublish", "yank", "deprecate"})
# Programs whose ``rm``, ``rmi``, ``rb`` or ``push`` subcommand deletes or publishes.
_STORE_TOOLS: Final = frozenset(
    {"docker", "podman", "nerdctl", "buildah", "ctr", "crictl", "aws", "gsutil", "gcloud",
     "az", "lxc", "incus", "kubectl", "oc", "helm", "twine", "gem", "nuget", "dotnet", "rclone",
     "s3cmd", "mc", "restic", "borg"}
)  # fmt: skip
_STORE_DELETE: Final = frozenset({"rm", "rmi", "rb", "remove", "rmdir", "purge", "cleanup"})
_STORE_PUBLISH: Final = frozenset({"push", "upload"})


@dataclass(frozen=True, slots=True)
class CommandAnalysis:
    """A command as it will run, normalised, with what makes it dangerous."""

    #: the command as the agent sent it (bounded to :data:`MAX_COMMAND_CHARS`)
    original: str
    #: its true length in characters, also when announcer was given or checked less
    length: int
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
    def cut(self) -> bool:
        """Announcer did not see (or did not check) all of it: never read in full."""
        return self.length > len(self.original)

    @property
    def unreadable(self) -> tuple[str, ...]:
        """Why announcer cannot read it in full with confidence (codes, in a fixed order)."""
        return tuple(code for code in UNREADABLE if code in self.reasons)

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
        return self.cut or len(self.normalised) > LONG_COMMAND_CHARS


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
def analyse(command: str, length: int | None = None) -> CommandAnalysis:
    """What ``command`` will do: normalised, cut into parts, each part judged.

    ``length`` is the command's true length when the caller was given only its start
    (a hook client that had to cut it): a cut command is never read in full, so it is
    high risk whatever its start says."""
    original = command[:MAX_COMMAND_CHARS]
    true_length = max(len(command), length or 0)
    normalised, hidden = normalise(original)
    found = _Findings()
    _judge_script(normalised, found, depth=0)
    if _SQL_DESTRUCTIVE.search(normalised):
        found.add("sql_destructive", _around(normalised, _SQL_DESTRUCTIVE), irreversible=True)
    if _FORK_BOMB.search(normalised):
        found.add("fork_bomb", _around(normalised, _FORK_BOMB), irreversible=False)
    if _ANSI_C_ESCAPE.search(normalised):  # $'\x72m': text the shell decodes before it runs
        found.unreadable("decoded")
    if true_length > len(original):
        found.unreadable("cut")
    if hidden:
        found.unreadable("hidden")
    risk: Risk = "high" if found.parts or found.high else found.risk
    if len([line for line in normalised.split("\n") if line.strip()]) > 1 and risk == "low":
        risk = "medium"
    return CommandAnalysis(
        original=original,
        length=true_length,
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

    def unreadable(self, reason: str) -> None:
        """Announcer cannot read what will run: high risk, said with why."""
        self.reasons.add(reason)
        self.high = True


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


_FED_PROGRAM: Final = re.compile(
    r"(?:^|[\s;&|(])(?:source|\.|(?:\S*/)?(?:ba|z|da|k|fi)?sh|python[\d.]*|perl|ruby|node|php)"
    r"\s+(?:-\S+\s+)*<\((?P<inner>[^()]*)\)"
)
_OPERATOR_ONLY: Final = re.compile(r"^[;&|()<>]+$")


def _judge_script(script: str, found: _Findings, depth: int) -> None:
    if not script.strip():
        return
    if depth > 4:  # nested deeper than announcer follows: it cannot say what runs
        found.unreadable("nested")
        return
    for inner in _SUBSTITUTION.finditer(script):
        _judge_script(next(g for g in inner.groups() if g is not None), found, depth + 1)
    for fed in _FED_PROGRAM.finditer(script):  # bash <(curl ...), source <(...)
        found.unreadable("piped_program")
        if re.search(r"\b(?:curl|wget)\b", fed.group("inner")):
            found.add("run_download", fed.group(0).strip(), irreversible=True)
    tokens = _tokens(script)
    pipeline: list[list[str]] = []
    current: list[str] = []
    for token in [*tokens, ";"]:
        if token in ("<", "<<", "<<<", "<&") or _REDIRECT.match(token):
            current.append(token)
            continue
        if (
            token in _SEPARATORS
            or token == "()"
            or (_OPERATOR_ONLY.match(token) and token not in _SEPARATORS)
        ):
            if current:
                pipeline.append(current)
            current = []
            if token not in ("|", "|&"):
                _judge_pipeline(pipeline, found, depth)
                pipeline = []
            continue
        current.append(token)


def _redirects(words: list[str]) -> tuple[list[str], list[tuple[str, str]]]:
    """``(the words without their redirections, [(operator, target)...])``."""
    kept: list[str] = []
    redirects: list[tuple[str, str]] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word in ("<", "<<", "<<<", "<&") or _REDIRECT.match(word):
            target = words[index + 1] if index + 1 < len(words) else ""
            redirects.append((word.lstrip("0123456789"), target))
            index += 2
            continue
        kept.append(word)
        index += 1
    if kept and kept[-1].isdigit() and redirects:  # "2>/dev/null" reads as "2", ">"
        kept.pop()
    return kept, redirects


def _judge_pipeline(pipeline: list[list[str]], found: _Findings, depth: int) -> None:
    downloads = False
    decodes = False
    for position, raw_words in enumerate(pipeline):
        words, redirects = _redirects(raw_words)
        name, args = _command_of(words)
        fed = position > 0 or any(op in ("<", "<<", "<<<") for op, _ in redirects)
        if name and fed and _reads_program_from_input(name, args):
            # text piped or fed into a shell or interpreter: announcer cannot read it
            found.unreadable("decoded" if decodes else "piped_program")
            if downloads:
                found.add("run_download", _joined(pipeline), irreversible=True)
        if name in ("curl", "wget"):
            downloads = True
        if name in _DECODERS or _PYTHON.match(name):
            decodes = decodes or _decodes(name, args)
        _judge_redirects(name, args, words, redirects, found)
        if name:
            _judge_command(name, args, words, found, depth)


def _joined(pipeline: list[list[str]]) -> str:
    return " | ".join(" ".join(words) for words in pipeline)


def _decodes(name: str, args: list[str]) -> bool:
    """This program turns encoded text into other text (base64 -d, xxd -r, printf '\\x72')."""
    flags = _flags(args)
    if name in ("base64", "base32", "basenc", "uudecode"):
        return "d" in flags or "D" in flags or "--decode" in flags or name == "uudecode"
    if name == "xxd":
        return "r" in flags
    if name in ("printf", "echo"):
        return any("\\" in arg for arg in args) or "e" in flags
    if name in ("gzip", "bzip2", "xz", "zstd"):
        return "d" in flags or "--decompress" in flags
    if name == "openssl":
        return "d" in flags or "base64" in args
    return True  # rev, tr, iconv, gunzip, a one-liner...: what comes out is not what went in


def _reads_program_from_input(name: str, args: list[str]) -> bool:
    """A shell or interpreter given no program of its own: it runs what it reads."""
    if name in _SHELLS or name in ("source", ".") or _interpreter(name):
        operands = [a for a in args if not a.startswith("-") or a == "-"]
        if name in ("source", "."):
            return not operands or operands[0] in ("/dev/stdin", "-")
        if not operands or operands[0] == "-" or "-s" in args:
            return "-c" not in args and not any(
                a in _CODE_OPTIONS.get(_interpreter(name), ()) for a in args
            )
    # at and batch run the commands they read, later
    return name in ("at", "batch") and not any(a == "-f" for a in args)


def _interpreter(name: str) -> str:
    """The name :data:`_CODE_OPTIONS` knows an interpreter by, or ''."""
    if _PYTHON.match(name):
        return "python"
    lowered = name.lower().removesuffix(".exe")
    return lowered if lowered in _CODE_OPTIONS else ""


def _command_of(words: list[str]) -> tuple[str, list[str]]:
    """The command a simple command runs, looking through ``sudo``, ``env`` and the like."""
    index = 0
    while index < len(words):
        word = words[index]
        if _ASSIGNMENT.match(word):  # FOO=1 rm -rf ~
            index += 1
            continue
        name = _basename(word)
        if name == "function":  # function NAME { ...: its body is judged
            index += 2
            continue
        if name == "env" and any(w in ("-S", "--split-string") for w in words[index:]):
            at = next(i for i, w in enumerate(words) if w in ("-S", "--split-string"))
            split = words[at + 1].split() if at + 1 < len(words) else []
            return _command_of(split + words[at + 2 :])
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
    unreadable_name = _unreadable_name(name)
    if unreadable_name:  # $X -rf ~, /bin/r? -rf ~, {rm,-rf,~}: what runs is not written here
        found.unreadable(unreadable_name)
        _judge_script(" ".join(args), found, depth + 1)
        return
    code = _interpreter(name)
    if code and (
        any(a.split("=", 1)[0].lower() in _CODE_OPTIONS[code] for a in args)
        or (code == "deno" and args[:1] == ["eval"])
    ):  # python -c, perl -e, node -e: code in a language announcer does not read
        found.unreadable("one_liner")
        return
    if name in _AWKS and any(re.search(r"system|\|\s*getline|print[^;}]*>", a) for a in args):
        found.unreadable("one_liner")  # awk 'BEGIN{system("...")}'
        return
    if name == "alias" and any("=" in a for a in args):
        found.unreadable("alias")
        for value in (a.split("=", 1)[1] for a in args if "=" in a):
            _judge_script(value, found, depth + 1)
        return
    if name == "git" and any(a.startswith("alias.") and "=!" in a for a in args):
        found.unreadable("alias")  # git -c alias.x='!rm -rf ~' x
        return
    if name == "eval":  # text put together when it runs
        found.unreadable("runtime_name")
        _judge_script(text, found, depth + 1)
        return
    if name == "busybox" and args and _basename(args[0]) not in _SHELLS:
        _judge_command(_basename(args[0]), args[1:], args, found, depth + 1)  # busybox rm
        return
    if name in _SHELLS:
        script = ""
        if "-c" in args or any(a.startswith("-") and "c" in a[1:] for a in args[:2]):
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
    if name == "rsync" and any(a.startswith(("--delete", "--remove-source-files")) for a in args):
        found.add("delete", part, irreversible=True)
        return
    if name in _NETWORK:
        _judge_network(name, args, part, found)
        return
    if name in ("kill", "pkill", "killall"):
        found.at_least("medium")
        return
    if name == "crontab" and not ({"l"} >= _flags(args) and _flags(args)):
        # crontab -r deletes it; crontab FILE or - replaces it whole
        found.add("delete" if "r" in _flags(args) else "overwrite", part, irreversible=True)
        return
    if name in ("tee", "cp", "mv", "install", "ln") and _overwrites(name, args, part, found):
        return
    family = _subcommand_family(name, args)
    if family:
        found.add(family, part, irreversible=True)
        return
    if name in ("sed", "perl") and any(a.startswith("-i") or a.startswith("-pi") for a in args):
        found.at_least("medium")
        return
    if name in _READ_ONLY:
        return
    found.at_least("medium")
    _judge_wrapped(name, args, found, depth)


# Package managers whose own ``rm`` takes a dependency out of a project (npm rm lodash).
_PACKAGE_MANAGERS: Final = frozenset(
    {"npm", "pnpm", "yarn", "bun", "cargo", "poetry", "uv", "pip", "pip3", "go", "dotnet",
     "brew", "apt", "apt-get", "conda", "gem", "composer", "pipx"}
)  # fmt: skip
_RUNS_OTHERS: Final = (
    _DELETERS | _DISK_WRITERS | _SHELLS | _POWER | frozenset({"dd", "eval", "truncate"})
)


#: programs whose quoted arguments are code of their own, never a shell command
_OWN_LANGUAGE: Final = _AWKS | frozenset({"sed", "jq", "yq", "grep", "rg", "bc", "dc"})


def _judge_wrapped(name: str, args: list[str], found: _Findings, depth: int) -> None:
    """A program announcer does not know may run another (chrt 10 rm -rf ~, su -c '...'):
    a known dangerous program among its words, or a command string, is judged as one."""
    if name in _OWN_LANGUAGE or _interpreter(name):
        return
    for index, arg in enumerate(args):
        if " " in arg.strip() or ";" in arg:  # su -c 'rm -rf ~', script -c '...'
            _judge_script(arg, found, depth + 1)
        elif (
            _basename(arg) in _RUNS_OTHERS
            and name not in _PACKAGE_MANAGERS
            and index + 1 < len(args)
        ):
            _judge_command(_basename(arg), args[index + 1 :], args[index:], found, depth + 1)
            return


def _unreadable_name(name: str) -> str:
    """Why a program's name cannot be read as written ('' when it can)."""
    if _PLAIN_NAME.match(name) or name in _GROUPING:
        return ""
    if "$" in name or "`" in name or name == "{}":
        return "runtime_name"  # $X, $a$b, rm${IFS}-rf, $(...), xargs' {}
    if any(mark in name for mark in "*?[") or ("{" in name and ("," in name or ".." in name)):
        return "pattern_name"  # the shell picks the program: /bin/r?, {rm,-rf,~}
    return "strange_name"


def _judge_redirects(
    name: str,
    args: list[str],
    words: list[str],
    redirects: list[tuple[str, str]],
    found: _Findings,
) -> None:
    """What a command's redirections overwrite, empty or send away."""
    part = " ".join(words + [f"{op} {target}" for op, target in redirects])
    for op, target in redirects:
        if not op.startswith((">", "&>")) or op == ">&":
            continue
        if target not in ("/dev/null", "/dev/stdout", "/dev/stderr"):
            found.at_least("medium")  # it writes a file
        if _DISK_DEVICE.match(target):
            found.add("overwrite_disk", part, irreversible=True)
        elif _NETWORK_DEVICE.match(target):  # cat ~/.ssh/id_rsa > /dev/tcp/host/port
            secret = bool(_SECRET.search(part))
            found.add("send_secret" if secret else "send_file", part, irreversible=True)
        elif target.startswith("/dev/"):
            continue  # /dev/null, /dev/stderr
        elif _SENSITIVE_FILE.search(target):  # what runs at the next login, who gets in
            found.add("overwrite", part, irreversible=op != ">>")
        elif op != ">>" and (
            not name
            or name in (":", "true", "false")
            or (name in ("echo", "printf") and not [a for a in args if not a.startswith("-")])
            or (name == "cat" and args == ["/dev/null"])
        ):  # : > file empties it
            found.add("truncate", part, irreversible=True)


def _overwrites(name: str, args: list[str], part: str, found: _Findings) -> bool:
    """tee, cp, mv, install, ln onto a disk, a start-up file or from /dev/null."""
    operands = [a for a in args if not a.startswith("-")]
    targets = operands if name == "tee" else operands[-1:]
    sources = [] if name == "tee" else operands[:-1]
    if any(_DISK_DEVICE.match(t) for t in targets):
        found.add("overwrite_disk", part, irreversible=True)
        return True
    if any(_SENSITIVE_FILE.search(t) for t in targets) or any(
        s in ("/dev/null", "/dev/zero", "/dev/urandom") for s in sources
    ):
        found.add("overwrite", part, irreversible="a" not in _flags(args))
        return True
    return False


def _subcommand_family(name: str, args: list[str]) -> str:
    """``destroy`` or ``publish`` when a program's own subcommand says so, else ''."""
    if name in _READ_ONLY or name == "git":
        return ""
    if name in _DESTROY_WORDS:  # dropdb
        return "destroy"
    operands = [a for a in args if not a.startswith("-")][:4]
    long_options = [a.split("=", 1)[0] for a in args if a.startswith("--")]
    words = {
        piece.lower() for a in [*operands, *long_options] for piece in re.split(r"[:/_.\-]", a)
    }
    if name in _STORE_TOOLS and operands:
        if operands[0] in _STORE_DELETE or (len(operands) > 1 and operands[1] in _STORE_DELETE):
            return "destroy"
        if operands[0] in _STORE_PUBLISH:
            return "publish"
    if (
        words & _DESTROY_WORDS
        or "-destroy" in args
        or ("down" in operands and ({"v"} & _flags(args) or "--volumes" in args))
    ):
        return "destroy"
    if words & _PUBLISH_WORDS:
        return "publish"
    return ""


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


def _joins_two_words(text: str, index: int) -> bool:
    """A single underscore between two letters or digits: a voice loses nothing there.
    Leading, trailing and doubled ones (``__init__.py``, ``_private``) are named."""
    return 0 < index < len(text) - 1 and text[index - 1].isalnum() and text[index + 1].isalnum()


def literal_for_speech(text: str, language: str = "en") -> str:
    """Text read exactly as written: safe for a synthesiser, the symbols a voice drops
    named (``dist/*`` is "dist/ star"), never markdown-cleaned, on one line."""
    safe = clean_speech(_HIDDEN.sub("", text))

    def name(match: re.Match[str]) -> str:
        if match.group(0) == "_" and _joins_two_words(safe, match.start()):
            # "old_notes.txt" is read as written: most voices pause there, and naming it
            # made a three-word command sound like four (issue 31, item 13).
            return "_"
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
    """About 20 words: true length, start, end, every dangerous part, why it cannot be read.

    A cut command's end is never said as its end: it was not seen.
    Not yet made speakable (the caller reads it with :func:`literal_for_speech`)."""
    tr = translator(language)
    count = analysis.length if analysis.cut else len(analysis.normalised)
    lines = analysis.lines
    parts = [
        tr.ngettext(
            "A long command, {count} character.", "A long command, {count} characters.", count
        ).format(count=format_integer(count, language))
    ]
    if analysis.cut:
        parts.append(_cut_sentence(analysis, language))
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
    if end and not analysis.cut:
        parts.append(tr.gettext("It ends: {end}").format(end=_edge(end)) + ".")
    parts += _warnings(analysis, language, SUMMARY_PARTS, cut=False)
    return " ".join(parts)


def _cut_sentence(analysis: CommandAnalysis, language: str) -> str:
    return (
        translator(language)
        .gettext("Only the first {shown} of its {total} characters were checked.")
        .format(
            shown=format_integer(len(analysis.original), language),
            total=format_integer(analysis.length, language),
        )
    )


def why_sentences(analysis: CommandAnalysis, language: str = "en") -> list[str]:
    """Why announcer cannot read the command in full, a few words each (cut first)."""
    tr = translator(language)
    said: list[str] = []
    for code in analysis.unreadable:
        if code == "cut":
            said.append(_cut_sentence(analysis, language))
        elif code == "hidden":
            said.append(
                tr.ngettext(
                    "It had {count} hidden character, taken out here.",
                    "It had {count} hidden characters, taken out here.",
                    analysis.hidden,
                ).format(count=format_integer(analysis.hidden, language))
            )
        else:
            said.append(tr.gettext(_WHY[code]))
    return list(dict.fromkeys(said))


N_ = str  # marks msgids for extraction (babel.cfg keywords); translated in why_sentences


_WHY: Final = {
    "decoded": N_("It runs text it decodes first."),
    "piped_program": N_("It runs text piped into it."),
    "runtime_name": N_("Its program is built when it runs."),
    "pattern_name": N_("Its program is a pattern, not a name."),
    "strange_name": N_("Its program name has unusual characters."),
    "one_liner": N_("It runs code announcer cannot check."),
    "alias": N_("It defines a command and runs it."),
    "nested": N_("It nests commands too deep to check."),
    "run_download": N_("It runs what it downloads."),
}


def _warnings(
    analysis: CommandAnalysis,
    language: str,
    limit: int,
    *,
    spoken: bool = False,
    cut: bool = True,
) -> list[str]:
    """Every dangerous part (up to ``limit`` named), then why it cannot be read in full."""
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
    why = why_sentences(analysis, language)
    if not cut and analysis.cut:
        why = why[1:]  # said already, with the length
    return parts + why


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
    # a short command is read as written; why it cannot be trusted as read comes after it
    why = why_sentences(analysis, language)
    if why and text and not text.endswith((".", "?", "!")):
        text += "."
    return " ".join([text, *why]).strip()


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
    extra = _warnings(analysis, language, len(analysis.dangerous) or 1, spoken=True)
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
    "why_sentences",
]
