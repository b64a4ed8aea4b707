"""``dlsched policies``: every job policy with a one-line summary, its paper and its options."""

from __future__ import annotations


def add_parser(sub) -> None:
    p = sub.add_parser("policies", help="list scheduling policies, their papers and options",
                       description="List every registered job policy: a one-line summary, the paper it "
                                   "follows, and the options `--option key=value` accepts, with defaults; "
                                   "then the communication policies `--comm` accepts.")
    p.add_argument("names", nargs="*", help="only these policies (default: all)")
    p.set_defaults(func=run)


def run(args) -> int:
    from dlsched.comm.registry import COMM_POLICIES, describe
    from dlsched.policies.registry import policy_info, policy_names

    comm = [n for n in args.names if n in COMM_POLICIES] if args.names else COMM_POLICIES
    names = [n for n in args.names if n not in COMM_POLICIES] if args.names else policy_names()
    infos = [policy_info(n) for n in names]  # an unknown name fails before anything is printed
    print("job policies (--policy NAME, --option KEY=VALUE):")
    for info in infos:
        print(f"\n{info.name}: {info.summary}")
        if info.paper and info.paper != "-":
            print(f"  paper: {info.paper}")
        if not info.options:
            print("  options: none")
        for o in info.options:
            print(f"  --option {o.name}=<{o.type.__name__}>  default {o.describe_default()}: {o.help}")
    if comm:
        print("\ncommunication policies (--comm NAME, with --comm-levels K --comm-reserved N; docs/crux.md):")
        for n in comm:
            print(f"  {n}: {describe(n)}")
    return 0
