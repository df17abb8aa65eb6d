"""ranx's ``Qrels`` and ``Run`` for :mod:`fastir.ranx`: ranx's constructors, methods and
attributes (``qrels.qrels`` / ``run.run``, ``run.name``, ``run.scores``...), holding a fastir
container when read from a file or frame and a dict when built or changed by hand; each is
turned into the other only when asked for.

The table is a plain dict (sorted as ranx sorts them: query ids, then scores descending)
until ``run.run`` / ``qrels.qrels`` is asked for: that is ranx's form, a numba typed dict of
typed dicts, which ranx's own numba functions take, and it is then the table (changes made
to it are the run's). LZ4 files are not provided.
"""

import json
import os
from collections import defaultdict

import numpy as np

from fastir._optional import require
from fastir.io.trec import read_qrels, read_run
from fastir.model.data import Qrels as FastirQrels
from fastir.model.data import Run as FastirRun
from fastir.output.writing import atomic_write

KINDS = {"json", "trec", "txt", "gz", "parquet", "parq"}


class _Table:
    """What ranx's Qrels and Run share: a ``{query: {doc: value}}`` table (``_data``), or
    the fastir container it came from (``_fastir``), or both. A Run built from a dict keeps
    a copy of it as given (``_given``: a dict per query, copied at C speed) and makes its
    table (values cast, docs sorted, as ranx shows them) only when asked for: evaluating it
    converts the copy in bulk."""

    _container = None  # the fastir class
    _value = float  # the values' type
    _columns = ("q_id", "doc_id", "score")
    _lazy = False  # (a Run's table is made when first asked for; a Qrels' at once)

    def __init__(self, data=None, name=None):
        self._data, self._given, self._fastir = {}, None, None
        self.name = name
        self.sorted = False
        if data is not None and self._lazy:  # (sorted when shown)
            self._data, self._given = None, dict(zip(data, map(dict, data.values())))
            self.sorted = True
        elif data is not None:
            self._data = self._cast(data)
            self.sort()

    def _cast(self, data):
        return {q: {d: self._value(v) for d, v in docs.items()} for q, docs in data.items()}

    def _table(self):
        """The table: a plain dict, or the typed one handed out (:meth:`_typed_table`)."""
        if self._data is None:
            if self._given is not None:
                self._data, self._given = self._cast(self._given), None
            else:
                self._data = self._fastir.to_dict()
            self.sort()
        return self._data

    def _typed_table(self):
        """The table in ranx's form, which is the table from now on (see the module doc)."""
        table = self._table()
        if not self._is_typed():
            from fastir.peers.ranx_typed import typed_table

            self._data = table = typed_table(table, self._value)
        return table

    def _plain_table(self):
        """The table as a plain dict, a copy if it is typed (what reads every row takes:
        Python reads a typed dict an item at a time, slowly)."""
        table = self._table()
        if not self._is_typed():
            return table
        from fastir.peers.ranx_typed import plain_table

        return plain_table(table, self._value)

    def __getstate__(self):  # (numba's typed dicts do not pickle)
        return {**self.__dict__, "_data": None if self._data is None else self._plain_table()}

    def _changed(self, sorted_after):
        self._fastir = None
        self.sorted = sorted_after

    # -- ranx's methods -------------------------------------------------------------------
    def keys(self):
        """The query ids."""
        return self._table().keys()

    def get_query_ids(self):
        return list(self._table())

    def get_doc_ids_and_scores(self):
        return list(self._plain_table().values())

    def to_typed_list(self):
        """ranx's internal form, for ranx's own kernels (``ranx.metrics``): a numba typed
        list of one ``(n, 2)`` array per query in order, rows ``[hash(doc id), value]`` in
        ranked order (ranx hashes in numba, fastir in Python: the same within a process,
        which is all its kernels compare)."""
        from numba.typed import List

        return List([np.array([[hash(d), v] for d, v in docs.items()],
                              dtype=np.float64).reshape(-1, 2)
                     for docs in self._plain_table().values()])

    def add_score(self, q_id, doc_id, score):
        """Set one (query, doc) value."""
        table = self._table()
        if self._is_typed():
            from fastir.peers.ranx_typed import text_id

            text_id(q_id, "query"), text_id(doc_id, "doc")
        if q_id not in table:
            self._set_rows(table, q_id, {})
        table[q_id][doc_id] = self._value(score)
        self._changed(False)

    def add(self, q_id, doc_ids, scores):
        self.add_multi([q_id], [doc_ids], [scores])

    def add_multi(self, q_ids, doc_ids, scores):
        """Set the docs and values of several queries (each query replaced), then sort."""
        table = self._table()
        for q_id, docs, values in zip(q_ids, doc_ids, scores):
            self._set_rows(table, q_id, {d: self._value(v) for d, v in zip(docs, values)})
        self._changed(False)
        self.sort()

    def _set_rows(self, table, q_id, rows):
        """Set query ``q_id``'s ``rows`` (``{doc: value}``) in ``table``, in its form."""
        if self._is_typed():
            from fastir.peers.ranx_typed import text_id, typed_rows

            q_id, rows = text_id(q_id, "query"), typed_rows(rows, self._value)
        table[q_id] = rows

    def sort(self):
        """Sort as ranx: query ids, then each query's docs by value descending."""
        table = self._plain_table()
        self._replace({q: dict(sorted(table[q].items(), key=lambda item: -item[1]))
                       for q in sorted(table)})
        self.sorted = True

    def _replace(self, table):
        """Make the plain dict ``table`` the table, in the form the table had."""
        if self._is_typed():
            from fastir.peers.ranx_typed import typed_table

            table = typed_table(table, self._value)
        self._data = table

    def _is_typed(self):
        """Whether the table is the typed one handed out (:meth:`_typed_table`)."""
        return self._data is not None and not isinstance(self._data, dict)

    def to_fastir(self):
        """The table as a :class:`fastir.Qrels` / :class:`fastir.Run` (cached while the
        table is not handed out: once ``run.run`` is, it may change at any time, and it is
        read anew each time)."""
        if self._fastir is None or self._is_typed():
            self._fastir = self._from_dict(self._given if self._data is None else
                                           self._plain_table())
        return self._fastir

    def to_dict(self):
        return defaultdict(dict, {q: dict(docs) for q, docs in self._plain_table().items()})

    def to_dataframe(self):
        pd = require("pandas", "to_dataframe (fastir.ranx)")

        rows = [(q, d, v) for q, docs in self._plain_table().items() for d, v in docs.items()]
        return pd.DataFrame(rows, columns=list(self._columns))

    def save(self, path="data.json", kind=None):
        """Write as JSON, TREC or Parquet (``kind`` or the extension says which), whole or not
        at all (:func:`~fastir.output.writing.atomic_write`)."""
        kind = file_kind(path, kind)
        with atomic_write(path, binary=kind == "parquet") as f:
            if kind == "json":
                json.dump(self.to_dict(), f)
            elif kind == "parquet":
                self.to_dataframe().to_parquet(f, index=False)
            else:
                f.write("\n".join(self._trec_lines()))

    @property
    def size(self):
        return len(self._table())

    def __getitem__(self, q_id):
        return dict(self._table()[q_id])

    def __len__(self):
        return len(self._table())

    def __repr__(self):
        return repr(self._plain_table())

    __str__ = __repr__

    # -- constructors -----------------------------------------------------------------------
    @classmethod
    def _wrap(cls, container, name=None):
        table = cls(name=name)
        table._data, table._given, table._fastir, table.sorted = None, None, container, True
        return table

    @classmethod
    def _from_file(cls, path, kind, name, read):
        kind = file_kind(path, kind)
        if kind == "json":
            with open(path) as f:
                return cls(json.load(f), name=name)
        if kind == "parquet":
            pd = require("pandas", "from_file of a Parquet file (fastir.ranx)")

            return cls._from_frame(pd.read_parquet(path), *cls._columns, name)
        return cls._wrap(read(path), name)

    @classmethod
    def _from_frame(cls, df, q_id_col, doc_id_col, value_col, name):
        return cls._wrap(cls._container.from_pandas(df, q_id_col, doc_id_col, value_col),
                         name)


class Qrels(_Table):
    """ranx's ``Qrels``: ``Qrels({query: {doc: label}}, name=None)``, ``Qrels.from_file``,
    ``from_dict``, ``from_df``, ``from_parquet``; ``add_score``, ``add_multi``, ``to_dict``,
    ``to_dataframe``, ``save``, ``set_relevance_level``. The table is ``qrels.qrels``."""

    _container = FastirQrels
    _value = int

    @property
    def qrels(self):
        return self._typed_table()

    @staticmethod
    def _from_dict(data):
        return FastirQrels.from_dict(data, source="ranx Qrels")

    def set_relevance_level(self, rel_lvl=1):
        """ranx's shift of every label by ``rel_lvl - 1`` (so that level 1 means ``rel_lvl``)."""
        shift = int(rel_lvl) - 1
        table = self._plain_table()
        self._replace({q: {d: v - shift for d, v in docs.items()} for q, docs in table.items()})
        self._changed(True)

    def _trec_lines(self):
        return [f"{q} 0 {d} {v}" for q, docs in self._plain_table().items()
                for d, v in docs.items()]

    @staticmethod
    def from_dict(d):
        return Qrels(d)

    @staticmethod
    def from_file(path, kind=None):
        """From a JSON, TREC (plain or gzip) or Parquet file."""
        return Qrels._from_file(path, kind, None, read_qrels)

    @staticmethod
    def from_df(df, q_id_col="q_id", doc_id_col="doc_id", score_col="score"):
        return Qrels._from_frame(df, q_id_col, doc_id_col, score_col, None)

    @staticmethod
    def from_parquet(path, q_id_col="q_id", doc_id_col="doc_id", score_col="score",
                     pd_kwargs=None):
        pd = require("pandas", "Qrels.from_parquet (fastir.ranx)")

        return Qrels.from_df(pd.read_parquet(path, **(pd_kwargs or {})), q_id_col, doc_id_col,
                             score_col)


class Run(_Table):
    """ranx's ``Run``: ``Run({query: {doc: score}}, name=None)``, ``Run.from_file``,
    ``from_dict``, ``from_df``, ``from_parquet``; ``add_score``, ``add_multi``,
    ``make_comparable``, ``to_dict``, ``to_dataframe``, ``save``. The table is ``run.run``;
    :func:`fastir.ranx.evaluate` saves per-query values in ``run.scores``, means in
    ``run.mean_scores`` and ``run.std_scores``."""

    _container = FastirRun
    _lazy = True

    def __init__(self, run=None, name=None):
        super().__init__(run, name)
        self.metadata = {}
        self.scores = defaultdict(dict)
        self.mean_scores = {}
        self.std_scores = {}

    @property
    def run(self):
        return self._typed_table()

    def _from_dict(self, data):
        return FastirRun.from_dict(data, name=self.name or "run", source="ranx Run")

    def make_comparable(self, qrels):
        """Give the run an empty ranking for every qrels query it lacks and drop the queries
        the qrels lack, as ranx (in place; returns the run)."""
        table, judged = self._plain_table(), set(qrels.keys())
        self._replace({q: table.get(q, {}) for q in judged})
        self._changed(False)
        self.sort()
        return self

    def _trec_lines(self):
        return [f"{q} Q0 {d} {rank} {v} {self.name}" for q, docs in self._plain_table().items()
                for rank, (d, v) in enumerate(docs.items(), 1)]

    @staticmethod
    def from_dict(d, name=None):
        return Run(d, name=name)

    @staticmethod
    def from_file(path, kind=None, name=None):
        """From a JSON, TREC (plain or gzip) or Parquet file; a TREC file's tag names the run
        unless ``name`` does."""
        run = Run._from_file(path, kind, name, read_run)
        if run.name is None and run._fastir is not None:
            run.name = run._fastir.name
        return run

    @staticmethod
    def from_df(df, q_id_col="q_id", doc_id_col="doc_id", score_col="score", name=None):
        return Run._from_frame(df, q_id_col, doc_id_col, score_col, name)

    @staticmethod
    def from_parquet(path, q_id_col="q_id", doc_id_col="doc_id", score_col="score",
                     pd_kwargs=None, name=None):
        pd = require("pandas", "Run.from_parquet (fastir.ranx)")

        return Run.from_df(pd.read_parquet(path, **(pd_kwargs or {})), q_id_col, doc_id_col,
                           score_col, name)


def file_kind(path, kind=None):
    """ranx's file kind: ``kind``, or the extension (``.txt`` is TREC, ``.parq`` Parquet)."""
    if kind is None:
        kind = os.path.splitext(path)[1][1:]
    kind = {"txt": "trec", "parq": "parquet"}.get(kind, kind)
    if kind not in KINDS:
        raise ValueError(f"kind must be 'json', 'trec', 'gz' or 'parquet' (ranx's LZ4 files "
                         f"are not read here), got {kind!r}")
    return kind
