"""The child interpreter of ``UnsafeLocalCodeExecutor``: the code comes on stdin, runs
in fresh globals (named ``__main__`` when it has a ``__name__ == "__main__"`` guard),
and an exception is printed without this file's frame, exit status 1; ``SystemExit``
keeps the status the code chose."""

import re
import sys
import traceback


def main() -> None:
    source = sys.stdin.buffer.read().decode("utf-8")
    guarded = re.search(r"if\s+__name__\s*==\s*['\"]__main__['\"]", source) is not None
    scope = {"__name__": "__main__"} if guarded else {}
    try:
        exec(compile(source, "<code>", "exec"), scope, scope)
    except SystemExit:
        raise
    except BaseException as error:  # the code's failure is its result, printed as Python would
        tb = error.__traceback__
        traceback.print_exception(type(error), error, tb.tb_next if tb else None, file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
