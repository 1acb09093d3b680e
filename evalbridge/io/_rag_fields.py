"""The fields of a RAG log: the names each role is known by, dotted paths, and how one field is picked.

Shared by the strict reader (:mod:`.rag`) and its columnar fast path (:mod:`._rag_columns`), so both pick
the same field with the same message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import InputError
from ..wording import option

__all__ = ["DEFAULTS", "get_path", "choose_field"]

#: role -> the field names looked for when the option is not given
DEFAULTS: Mapping[str, tuple[str, ...]] = {
    "query": ("query_id", "qid", "question_id", "id"),
    "retrieved": ("retrieved", "retrieved_ids", "contexts", "results", "docs"),
    "relevant": ("relevant", "relevant_ids", "ground_truth", "gold", "qrels"),
    "doc": ("doc_id", "id", "docid", "corpus_id", "corpus-id"),
}


def get_path(obj: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted ``path``; KeyError when a part is missing."""
    value: Any = obj
    for part in path.split("."):
        if not isinstance(value, Mapping) or part not in value:
            raise KeyError(path)
        value = value[part]
    return value


def choose_field(obj: Mapping[str, Any], role: str, given: str | None, where: str) -> tuple[str, str | None]:
    """(field, note) for ``role``: the given one, or the single default present."""
    if given is not None:
        return given, None
    found = [name for name in DEFAULTS[role] if name in obj]
    if len(found) != 1:
        problem = (f"no field looks like the {role} list" if role != "query" else "no field looks like the question id"
                   ) if not found else f"several fields could be the {role}: {', '.join(map(repr, found))}"
        looked = ", ".join(DEFAULTS[role])
        raise InputError(f"{problem} (looked for {looked}; the object has {', '.join(map(repr, obj))}).",
                         source=where, fix=f"name the field: {option(role, column=True)} (dotted paths reach "
                                                  f"nested objects).")
    return found[0], f"{role}={found[0]}"
