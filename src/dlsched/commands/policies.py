"""``dlsched policies``: every job and communication policy, built-in or plugin, with its options."""

from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("policies", help="list scheduling policies, their papers and options",
                       description="List every job policy (built-in, installed plugin, or a file.py:Class / "
                                   "module:Class given by name): a one-line summary, the paper it follows, "
                                   "where it comes from, and the options `--option key=value` accepts, with "
                                   "defaults; then the communication policies `--comm` accepts.")
    p.add_argument("names", nargs="*", help="only these policies (default: all)")
    p.set_defaults(func=run)


def _origin(origin: str, source: str) -> str:
    return "" if origin == "built-in" else f"  [{origin}: {source}]"


def run(args) -> int:
    from dlsched.comm.registry import COMM, comm_options, describe
    from dlsched.policies.registry import POLICIES, policy_info, policy_names
    from dlsched.registry import is_reference

    comm_names = COMM.names()
    # a reference is a job policy if it loads as one, else a communication policy
    comm = [n for n in args.names if n in comm_names or (is_reference(n) and n not in POLICIES and n in COMM)] \
        if args.names else comm_names
    names = [n for n in args.names if n not in comm] if args.names else policy_names()
    infos = [policy_info(n) for n in names]  # an unknown name fails before anything is printed
    print("job policies (--policy NAME, --option KEY=VALUE):")
    for info in infos:
        print(f"\n{info.name}: {info.summary}{_origin(info.origin, info.source)}")
        if info.paper and info.paper != "-":
            print(f"  paper: {info.paper}")
        if not info.options:
            print("  options: none")
        for o in info.options:
            print(f"  --option {o.name}=<{o.type.__name__}>  default {o.describe_default()}: {o.help}")
    if comm:
        print("\ncommunication policies (--comm NAME, with --comm-levels K --comm-reserved N; docs/crux.md):")
        for n in comm:
            entry = COMM.entry(n)
            taken = ", ".join(o.name for o in comm_options(n)) or "none"
            print(f"  {n}: {describe(n)} (settings: {taken}){_origin(entry.origin, entry.source)}")
    return 0
