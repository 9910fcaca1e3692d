"""Hardware mode's confirmation in the runner: nothing moves until the user has seen the excitation node's plan and
said yes.

The excitation node, once it has fresh joint states and has planned and checked the approach, publishes its state
`waiting_for_confirmation` with the plan as its reason (parts separated by "; ") and waits for its parameter
`confirm` to be true. Once every node of the graph is up (the estimator offers its service: one still starting
loaded the machine as the arm began to move, and CI saw the Panda's joint states stall), the runner prints the plan,
one part per line, and then:

- on a terminal: asks, and sets `confirm` itself when the user types `yes` (anything else: not confirmed, the run
  stops, exit 1);
- with --yes: sets `confirm` at once;
- with no terminal (stdin not a tty, or the runner a background job) and no --yes: says how to confirm from
  elsewhere and waits (Ctrl-C and --timeout still end the run); when someone else sets `confirm`, the node moves on
  and so does the run.

Confirmation holds the decisions (no DDS, no terminal), TerminalLine reads the answer without blocking the runner's
loop, and RunMonitor (run_monitor.py) sets the parameter through the node's parameter service.
"""

from __future__ import annotations

import os
import select
import sys
import termios
from collections.abc import Callable
from typing import Protocol

WAITING = "waiting_for_confirmation"
"""The excitation node's state while it waits for `confirm`; its reason is the plan."""
YES = "yes"

NOTHING, ASK, SET, REFUSE = "nothing", "ask", "set", "refuse"
"""What the runner does next: nothing, read the answer from the terminal, set `confirm`, stop the run."""


def plan_lines(reason: str) -> list[str]:
    """The plan's parts, one a line (the node separates them with "; ")."""
    return [part.strip() for part in reason.split("; ") if part.strip()]


class Confirmation:
    """The runner's side of the excitation node's wait: fed the node's states, the user's answer and the parameter
    service's reply, it prints what the user must know (through `say`) and returns what to do next."""

    def __init__(self, say: Callable[[str], None], node: str, domain_id: str, assume_yes: bool = False,
                 terminal: bool = False) -> None:
        self.say, self.node, self.domain_id = say, node, domain_id
        self.assume_yes, self.terminal = assume_yes, terminal
        self.phase = "plan"  # plan -> asking | elsewhere | setting -> confirmed | refused
        self.refusal = ""
        """Why the run stops unconfirmed ('' while it may go on)."""

    @property
    def asking(self) -> bool:
        """The plan is shown and the answer is to be read from the terminal."""
        return self.phase == "asking"

    def on_status(self, state: str, reason: str) -> str:
        """A state the excitation node published: the plan shown and the question asked when it waits."""
        if state != WAITING:
            if self.phase in ("asking", "elsewhere"):  # confirmed by someone else, or the node stopped waiting
                self.phase = "confirmed"
                self.say(f"robot_id: the excitation node no longer waits for confirmation ({state})")
            return NOTHING
        if self.phase not in ("plan", "confirmed"):
            return NOTHING
        self.say("robot_id: the excitation node's plan, before anything moves:")
        for line in plan_lines(reason):
            self.say(f"robot_id:   {line}")
        if self.assume_yes:
            self.phase = "setting"
            self.say(f"robot_id: --yes: setting the parameter confirm of {self.node} to true")
            return SET
        if self.terminal:
            self.phase = "asking"
            self.say(f"robot_id: type {YES} and Enter to let the arm move; anything else stops every node")
            return ASK
        self.phase = "elsewhere"
        self.say(f"robot_id: no terminal to ask on: rerun with --yes, or set the parameter confirm of {self.node} to "
                 f"true (where the ROS 2 command line exists: ROS_DOMAIN_ID={self.domain_id} ros2 param set "
                 f"{self.node} confirm true); waiting (Ctrl-C stops every node)")
        return NOTHING

    def on_answer(self, text: str) -> str:
        """The line the user typed: `yes` sets confirm, anything else ends the run unconfirmed."""
        if self.phase != "asking":
            return NOTHING
        if text.strip() == YES:
            self.phase = "setting"
            self.say(f"robot_id: confirmed: setting the parameter confirm of {self.node} to true")
            return SET
        self.phase = "refused"
        self.refusal = f"not confirmed (answered {text.strip()!r}, not {YES!r})"
        return REFUSE

    def on_set_reply(self, error: str) -> str:
        """The parameter service's reply to setting confirm: '' set, else why not (the run stops)."""
        if self.phase != "setting":
            return NOTHING
        if error:
            self.phase = "refused"
            self.refusal = f"could not set the parameter confirm of {self.node}: {error}"
            return REFUSE
        self.phase = "confirmed"
        self.say(f"robot_id: confirm of {self.node} is true: the arm starts to move")
        return NOTHING

    def step(self, channel: ConfirmChannel, terminal: TerminalLine | None) -> None:
        """One turn of the runner's loop: the node's new states, the answer once typed, the service's reply."""
        actions = [self.on_status(msg.state, msg.reason) for msg in channel.take_excitation_updates()]
        if self.asking and terminal is not None:
            line = terminal.poll()
            if line is not None:
                actions.append(self.on_answer(line))
        reply = channel.confirm_reply()
        if reply is not None:
            actions.append(self.on_set_reply(reply))
        for action in actions:
            if action == ASK and terminal is not None:
                terminal.discard()  # a "yes" typed before the plan was shown does not confirm it
            elif action == SET:
                channel.set_confirm()


class ConfirmChannel(Protocol):
    """What Confirmation.step needs of the DDS side (RunMonitor)."""

    def take_excitation_updates(self) -> list: ...
    def set_confirm(self) -> None: ...
    def confirm_reply(self) -> str | None: ...


class TerminalLine:
    """A line typed on the terminal, read without blocking the runner's loop (select, then os.read)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._typed = b""

    @classmethod
    def of_stdin(cls) -> TerminalLine | None:
        """stdin, when it is a terminal this process has in the foreground (a background job that reads or flushes
        its terminal is stopped by the shell); None otherwise."""
        stdin = sys.stdin
        if stdin is None or not stdin.isatty():
            return None
        try:
            foreground = os.tcgetpgrp(stdin.fileno()) == os.getpgrp()
        except OSError:
            return None
        return cls(stdin.fileno()) if foreground else None

    def discard(self) -> None:
        """Forget what was typed so far."""
        termios.tcflush(self.fd, termios.TCIFLUSH)
        self._typed = b""

    def poll(self) -> str | None:
        """The line once typed whole (without its newline; at the end of input, what was typed); None until then."""
        while select.select([self.fd], [], [], 0)[0]:
            chunk = os.read(self.fd, 1024)
            if not chunk:
                line, self._typed = self._typed, b""
                return line.decode(errors="replace")
            self._typed += chunk
            if b"\n" in self._typed:
                line, _, self._typed = self._typed.partition(b"\n")
                return line.decode(errors="replace")
        return None
