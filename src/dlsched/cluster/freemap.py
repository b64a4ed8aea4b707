"""GPU-id-level occupancy with O(1) free counts per node, rack and GPU type.

A GPU holds a count of jobs and one sharing mode: free, exclusive (one job),
packed or sliced (any number of jobs of that one mode, on purpose: Gandiva).
The map refuses an exclusive job on a held GPU and a shared job beside a job
of another mode, so no engine bug can put two jobs on a GPU by accident.  Counts of *free* GPUs (occupancy 0)
are kept per node, per (rack, type) and per type, and updated on every
change, so "how many free GPUs of type T on node/rack" is an array lookup.

The engine's map also keeps, per GPU type and free count, the set of nodes
with exactly that many free GPUs, so the best-fit node for a job (the
fullest node that still fits it) is found without scanning the nodes.
Scratch copies (``copy``), which policies make per call and throw away,
skip that index and answer the same question from the arrays.
"""

from __future__ import annotations

import numpy as np

from dlsched.cluster.topology import Cluster
from dlsched.errors import InvariantError


_SMALL = 32  # allocations up to this many GPUs are counted with scalar updates


def _index_lists(cluster: Cluster) -> tuple[list[int], list[int], list[int], list[tuple[int, int]]]:
    """GPU -> node, node -> rack, node -> type, node -> (first GPU, GPU count) as Python lists
    (scalar lookups in lists are cheapest)."""
    return cluster.derived("freemap.index_lists", lambda: (
        cluster.gpu_node.tolist(), cluster.node_rack.tolist(), cluster.node_type.tolist(),
        [(nd.first_gpu, nd.num_gpus) for nd in cluster.nodes]))


def nodes_of_type(cluster: Cluster) -> list[np.ndarray]:
    """Per GPU type, its nodes' ids, ascending."""
    return cluster.derived("freemap.nodes_of_type", lambda: [
        np.flatnonzero(cluster.node_type == t) for t in range(len(cluster.gpu_types))])


def _type_node_lists(cluster: Cluster) -> list[list[int]]:
    """``nodes_of_type`` as Python lists, for walks in plain Python."""
    return cluster.derived("freemap.type_node_lists", lambda: [a.tolist() for a in nodes_of_type(cluster)])


def _type_node_max(cluster: Cluster) -> list[int]:
    """Per GPU type, the GPUs of its largest node: no node of the type ever has more free."""
    return cluster.derived("freemap.type_node_max", lambda: [
        int(cluster.node_gpus[nodes].max(initial=0)) for nodes in nodes_of_type(cluster)])


NO_FIT = np.iinfo(np.int32).max  # a free count no node reaches: "does not fit"

# per-GPU mode codes (``FreeMap.mode``)
FREE, EXCLUSIVE, PACKED, SLICED = 0, 1, 2, 3
MODE_CODES = {"exclusive": EXCLUSIVE, "packed": PACKED, "sliced": SLICED}
_ONLY_EXCLUSIVE = {EXCLUSIVE}


class FreeMap:
    def __init__(self, cluster: Cluster, first_free: bool = False):
        self.cluster = cluster
        # the run's placement mode, not the topology's: True makes ``pick_gpus`` take the first
        # free GPUs in node order (cluster/oblivious.py) instead of packing jobs
        self.first_free = first_free
        self.occupancy = np.zeros(cluster.num_gpus, dtype=np.int16)
        self.mode = np.zeros(cluster.num_gpus, dtype=np.int8)  # FREE where occupancy is 0
        self.node_free = cluster.node_gpus.astype(np.int32).copy()
        ntypes = len(cluster.gpu_types)
        self.rack_type_free = np.zeros((cluster.num_racks, ntypes), dtype=np.int32)
        np.add.at(self.rack_type_free, (cluster.node_rack, cluster.node_type), cluster.node_gpus)
        self.type_free = cluster.type_gpus.astype(np.int64).copy()
        self.total_free = cluster.num_gpus
        self.version = 0  # bumped whenever the set of free GPUs changes: "nothing freed since" is one comparison
        self._lists = _index_lists(cluster)
        self._type_nodes = _type_node_lists(cluster)  # held here: scratch maps walk it on every best fit
        self._type_max = _type_node_max(cluster)
        self._views()
        # type -> free count -> nodes of that type with exactly that many free GPUs
        self._by_free: list[list[set[int]]] | None = [
            [set() for _ in range(int(cluster.node_gpus[nodes].max(initial=0)) + 1)]
            for nodes in nodes_of_type(cluster)]
        for node, (t, k) in enumerate(zip(self._lists[2], self.node_free.tolist())):
            self._by_free[t][k].add(node)

    def _views(self) -> None:
        # memoryviews on the arrays' own buffers: reading or bumping one element through them costs
        # about a third of numpy's scalar indexing, and the arrays stay the single truth
        self._occ, self._modes = memoryview(self.occupancy), memoryview(self.mode)
        self._nf, self._rtf, self._tf = (memoryview(self.node_free), memoryview(self.rack_type_free),
                                         memoryview(self.type_free))

    def __getstate__(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if not isinstance(v, memoryview)}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._views()

    def copy(self) -> "FreeMap":
        """A scratch copy for planning (policies try allocations on it, never on the engine's)."""
        new = FreeMap.__new__(FreeMap)
        new.cluster = self.cluster
        new.first_free = self.first_free
        new.occupancy = self.occupancy.copy()
        new.mode = self.mode.copy()
        new.node_free = self.node_free.copy()
        new.rack_type_free = self.rack_type_free.copy()
        new.type_free = self.type_free.copy()
        new.total_free = self.total_free
        new.version = self.version
        new._lists, new._type_nodes, new._type_max = self._lists, self._type_nodes, self._type_max
        new._views()
        new._by_free = None  # a scratch map answers best-fit queries from the arrays
        return new

    # ---------------------------------------------------------------- O(1) queries

    def free_on_node(self, node: int) -> int:
        return int(self.node_free[node])

    def free_in_rack(self, rack: int, type_id: int | None = None) -> int:
        row = self.rack_type_free[rack]
        return int(row.sum() if type_id is None else row[type_id])

    def free_of_type(self, type_id: int | None = None) -> int:
        return self.total_free if type_id is None else self._tf[type_id]

    def best_fit_node(self, type_id: int, n: int) -> int | None:
        """The node of ``type_id`` with the fewest free GPUs that are still at least ``n``
        (ties: the lowest node id), or None."""
        by_free = self._by_free
        if by_free is not None:
            per_count = by_free[type_id]
            for k in range(n, len(per_count)):
                if per_count[k]:
                    return min(per_count[k])
            return None
        # a scratch map: a walk in node order that stops at the first node with exactly n free
        # (nothing fits tighter, and it is the lowest such id) costs less than numpy's whole-array
        # passes on a few hundred nodes; none is needed where no node of the type is that large
        if n > self._type_max[type_id]:
            return None
        node_free = self._nf
        best, best_k = None, NO_FIT
        for node in self._type_nodes[type_id]:
            k = node_free[node]
            if n <= k < best_k:
                best, best_k = node, k
                if k == n:
                    break
        return best

    def nodes_with_free(self, type_ids) -> list[int] | None:
        """The nodes of these GPU types with a free GPU, in no set order, from the best-fit index
        (on a busy cluster a handful, where a scan sees every node); None on a scratch copy."""
        by_free = self._by_free
        if by_free is None:
            return None
        return [node for t in type_ids for nodes in by_free[t][1:] for node in nodes]

    def free_ids_of_node(self, node: int, n: int) -> list[int]:
        """The first ``n`` free GPU ids of ``node`` (all of them if it has fewer), ascending, as a list.

        One slice turned into a list, then plain Python: a node has a handful of GPUs,
        where numpy's per-call cost (flatnonzero) is most of the work.
        """
        first, count = self._lists[3][node]
        if self._nf[node] == count:  # an idle node (common on a cluster that is not full): no scan
            return list(range(first, first + (n if n < count else count)))
        occ = self._occ[first:first + count].tolist()
        return [first + i for i, o in enumerate(occ) if not o][:n]

    def take(self, nodes, n: int) -> list[int]:
        """The first ``n`` free GPU ids walking ``nodes`` in order (fewer if they hold fewer)."""
        out: list[int] = []
        node_free = self._nf
        for node in nodes.tolist() if hasattr(nodes, "tolist") else nodes:
            if node_free[node]:
                out += self.free_ids_of_node(node, n - len(out))
                if len(out) == n:
                    break
        return out

    def is_free(self, gpus) -> bool:
        return bool((self.occupancy[np.asarray(gpus, dtype=np.int64)] == 0).all())

    # ---------------------------------------------------------------- changes

    def _count(self, gpus, sign: int) -> None:
        c = self.cluster
        by_free = self._by_free
        if len(gpus) > _SMALL:
            nodes = c.gpu_node[np.asarray(gpus, dtype=np.int64)]
            touched = np.unique(nodes).tolist()
            if by_free is not None:
                for node in touched:
                    by_free[self._lists[2][node]][self._nf[node]].discard(node)
            np.add.at(self.node_free, nodes, sign)
            np.add.at(self.rack_type_free, (c.node_rack[nodes], c.node_type[nodes]), sign)
            np.add.at(self.type_free, c.node_type[nodes], sign)
            if by_free is not None:
                for node in touched:
                    by_free[self._lists[2][node]][self._nf[node]].add(node)
        else:  # a few scalar updates beat numpy's per-call overhead by far for a typical job
            gpu_node, node_rack, node_type, _ = self._lists
            node_free, rack_type_free, type_free = self._nf, self._rtf, self._tf
            # one update per run of GPUs on the same node (a job's GPUs are mostly one node's)
            i, m = 0, len(gpus)
            while i < m:
                node = gpu_node[gpus[i]]
                j = i + 1
                while j < m and gpu_node[gpus[j]] == node:
                    j += 1
                delta = sign * (j - i)
                i = j
                t = node_type[node]
                k = node_free[node]
                node_free[node] = k + delta
                rack_type_free[node_rack[node], t] += delta
                type_free[t] += delta
                if by_free is not None:
                    per_count = by_free[t]
                    per_count[k].discard(node)
                    per_count[k + delta].add(node)
        self.total_free += sign * len(gpus)
        self.version += 1

    def allocate(self, gpus, *, shared: bool = False, mode: str | None = None) -> None:
        """Mark GPUs as held by one more job of ``mode`` ("exclusive" unless given; ``shared`` means "packed").

        An exclusive job needs free GPUs; a packed or sliced one needs GPUs that
        are free or hold only jobs of its own mode.
        """
        code = MODE_CODES[mode] if mode is not None else (PACKED if shared else EXCLUSIVE)
        gl = gpus if type(gpus) is tuple else tuple(map(int, gpus))  # an Allocation's ids are ints already
        if len(set(gl)) != len(gl):
            raise InvariantError(f"allocation lists a GPU twice: {sorted(gl)}")
        occupancy, modes = self._occ, self._modes
        if code == EXCLUSIVE and len(gl) <= _SMALL and not any(map(occupancy.__getitem__, gl)):
            # the common case (a job alone on free GPUs), in one pass: every GPU goes from 0 to 1
            for g in gl:
                occupancy[g] = 1
                modes[g] = EXCLUSIVE
            self._count(gl, -1)
            return
        held = [g for g in gl if occupancy[g]]
        if held:
            if code == EXCLUSIVE:
                raise InvariantError(f"GPUs already held: {sorted(held)}")
            clash = [g for g in held if modes[g] != code]
            if clash:
                name = {v: k for k, v in MODE_CODES.items()}[code]
                raise InvariantError(f"GPUs {sorted(clash)} hold jobs of another sharing mode; "
                                     f"a {name} job cannot join them")
            newly = [g for g in gl if not occupancy[g]]
        else:
            newly = gl
        if len(gl) > _SMALL:
            idx = np.asarray(gl, dtype=np.int64)
            self.occupancy[idx] += 1
            self.mode[idx] = code
        else:
            for g in gl:
                occupancy[g] += 1
                modes[g] = code
        if newly:
            self._count(newly, -1)

    def release(self, gpus) -> None:
        gl = gpus if type(gpus) is tuple else tuple(map(int, gpus))
        occupancy = self._occ
        modes = self._modes
        if len(gl) <= _SMALL and set(map(modes.__getitem__, gl)) == _ONLY_EXCLUSIVE:
            # the common case (an exclusive job leaves): every GPU goes from 1 to 0
            for g in gl:
                occupancy[g] = 0
                modes[g] = FREE
            self._count(gl, +1)
            return
        idle = [g for g in gl if occupancy[g] <= 0]
        if idle:
            raise InvariantError(f"releasing GPUs that are not held: {idle}")
        freed = []
        for g in gl:
            left = occupancy[g] - 1
            occupancy[g] = left
            if not left:
                modes[g] = FREE
                freed.append(g)
        if freed:
            self._count(freed, +1)

    def check(self) -> None:
        """Recount everything from the occupancy array (debug mode)."""
        c = self.cluster
        free = (self.occupancy == 0).astype(np.int32)
        node_free = np.bincount(c.gpu_node, weights=free, minlength=c.num_nodes).astype(np.int32)
        if not np.array_equal(node_free, self.node_free):
            raise InvariantError("per-node free counts drifted from the occupancy map")
        if self._by_free is not None:
            for t, per_count in enumerate(self._by_free):
                for k, nodes in enumerate(per_count):
                    if any(int(self.node_free[nd]) != k or self._lists[2][nd] != t for nd in nodes):
                        raise InvariantError("the best-fit node index drifted from the free counts")
            if sum(len(nodes) for per_count in self._by_free for nodes in per_count) != c.num_nodes:
                raise InvariantError("the best-fit node index lost or duplicated a node")
        if int(free.sum()) != self.total_free:
            raise InvariantError("total free count drifted from the occupancy map")
        if (self.occupancy < 0).any():
            raise InvariantError("negative GPU occupancy")
        if ((self.occupancy == 0) != (self.mode == FREE)).any():
            raise InvariantError("a GPU's sharing mode disagrees with its occupancy")
        if ((self.mode == EXCLUSIVE) & (self.occupancy > 1)).any():
            raise InvariantError("an exclusive GPU is held by more than one job")
