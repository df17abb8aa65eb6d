"""Qrels and runs from pandas DataFrames: id columns packed without a Python string per row
where pandas holds them in Arrow buffers (its default ``str`` dtype when pyarrow is
installed), else from their numpy values; values checked as every form's are."""

from fastir.model.errors import InputError


def qrels_from_frame(cls, frame, query_col="query_id", doc_col="doc_id", label_col="relevance",
                     subtopic_col=None, source="qrels frame", labels="int"):
    """A :class:`~fastir.Qrels` (``cls``) of a DataFrame's columns (``subtopic_col``: the
    subtopics of subtopic judgments; ``labels``: "int", "float" (real labels) or
    "probability")."""
    columns = (query_col, doc_col, label_col) + ((subtopic_col,) if subtopic_col else ())
    require_columns(frame, columns, source)
    return cls.from_arrays(frame_ids(frame[query_col]), frame_ids(frame[doc_col]),
                           frame[label_col].to_numpy(),
                           None if subtopic_col is None else frame[subtopic_col].to_numpy(),
                           source=source, kind=labels)


def run_from_frame(cls, frame, query_col="query_id", doc_col="doc_id", score_col="score",
                   name="run", source="run frame"):
    """A :class:`~fastir.Run` (``cls``) of a DataFrame's columns."""
    require_columns(frame, (query_col, doc_col, score_col), source)
    return cls.from_arrays(frame_ids(frame[query_col]), frame_ids(frame[doc_col]),
                           frame[score_col].to_numpy(), name=name, source=source)


def require_columns(frame, columns, source):
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise InputError(f"{source}: missing column(s) {missing}; has {list(frame.columns)}")


def frame_ids(column):
    """A DataFrame's id column as ``from_arrays`` takes it: a text column held in Arrow
    buffers (pandas' ``str`` dtype with pyarrow storage), without nulls, as
    :class:`~fastir.model.ids.Ids` from its buffers (no Python string per row); any other
    column (pandas' Python-backed ``str``, its storage without pyarrow) as its numpy
    values."""
    if column.dtype != object and getattr(column.dtype, "storage", None) == "pyarrow":
        from fastir.model import arrow

        pa = arrow.pyarrow_module()
        data = column.array.__arrow_array__()
        if (pa.types.is_string(data.type) or pa.types.is_large_string(data.type)) and \
                not data.null_count:
            return arrow.ids_from_arrow(data.combine_chunks(), "column")
    return column.to_numpy()
