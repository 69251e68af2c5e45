"""Child interpreters that Ctrl-C reaches. A shell without job control starts background
commands with SIGINT ignored (`nohup ... &`, some CI runners), every process they start
inherits that, and a Python started so keeps ignoring SIGINT: neither its
KeyboardInterrupt nor rune_jit's handler goes in, and a test that interrupts an endless
compiled loop would wait for its timeout."""

import signal


def sigint_as_from_a_terminal() -> None:
    """A `preexec_fn`: the child starts with SIGINT's default action."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
