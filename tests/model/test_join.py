"""The join: a doc ranked twice in a query is one clear error naming the query and doc."""

import numpy as np
import pytest
from checks import useful

import fastir

pytestmark = pytest.mark.one_engine


def test_a_doc_ranked_twice_without_a_file_names_query_and_doc():
    run = fastir.Run.from_arrays(np.array(["q1", "q1", "q1"]), np.array(["a", "b", "a"]),
                                 np.array([3.0, 2.0, 1.0]))
    with pytest.raises(fastir.InputError) as info:
        fastir.evaluate({"q1": {"a": 1}}, run, ["AP"])
    useful(info.value, "query 'q1' ranks doc 'a' twice")


