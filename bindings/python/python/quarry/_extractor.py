"""The schema agent: a JSON Schema (or a Pydantic model) filled from a text by a model, every
value validated and grounded to its span, retried with precise feedback, and a question for a
person when a field cannot be resolved."""

import asyncio
import functools
import json
from typing import Any, Dict, Iterable, Mapping, Optional, Sequence, Type, Union

from . import _native
from ._results import Extraction, FieldResult, TokenUsage

SchemaLike = Union[Mapping[str, Any], str, Type[Any]]


def _is_pydantic_model(schema: Any) -> bool:
    return isinstance(schema, type) and hasattr(schema, "model_json_schema")


class Extractor:
    """Fills `schema` from texts with `model`.

    `schema` is a JSON Schema (a dict, or its JSON text) or a Pydantic v2 model class; with a
    class, `Extraction.value` is an instance of it. `model` is `provider:model`: `openai:…`,
    `anthropic:…`, `ollama:…`, `vllm:…`, `llamacpp:…`, `lmstudio:…`, `azure:DEPLOYMENT`,
    `gemini:…`, or `local:PATH.gguf` (or `local:NAME`, a model installed with `quarry model
    pull … --name NAME`) for in-process inference. Keys come from `api_key` or the
    environment as in the CLI (`QUARRY_API_KEY`, else the provider's own variable such as
    `OPENAI_API_KEY`).
    """

    def __init__(
        self,
        schema: SchemaLike,
        model: str = "openai:gpt-4o-mini",
        *,
        base_url: Optional[str] = None,
        api_key: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
        max_attempts: int = 3,
        max_tokens_budget: Optional[int] = None,
        max_completion_tokens: Optional[int] = None,
        temperature: Optional[float] = None,
        retries: int = 2,
        concurrency: int = 8,
        timeout: Optional[float] = None,
    ) -> None:
        self.model_class: Optional[Type[Any]] = schema if _is_pydantic_model(schema) else None
        if self.model_class is not None:
            document: Any = self.model_class.model_json_schema()
        elif isinstance(schema, str):
            document = schema
        elif isinstance(schema, Mapping):
            document = dict(schema)
        else:
            raise TypeError(
                "schema must be a JSON Schema dict, its JSON text, or a Pydantic model class, "
                f"not {type(schema).__name__}"
            )
        self.schema_text = document if isinstance(document, str) else json.dumps(document)
        self.model = model
        self._native = _native.NativeExtractor(
            self.schema_text,
            model,
            base_url=base_url,
            api_key=api_key,
            headers=list((headers or {}).items()),
            max_attempts=max_attempts,
            max_tokens_budget=max_tokens_budget,
            max_completion_tokens=max_completion_tokens,
            temperature=temperature,
            retries=retries,
            concurrency=concurrency,
            timeout=timeout,
        )

    def extract(self, text: str, *, clarifications: Iterable[str] = ()) -> Extraction:
        """Fills the schema from `text`. Unresolved fields are not an error: the extraction then
        has `complete == False` and a `question`; answer it by calling again with the answer in
        `clarifications`. The GIL is released while the model works; Ctrl-C cancels."""
        raw = self._native.extract(text, list(clarifications))
        return self._result(raw)

    async def aextract(self, text: str, *, clarifications: Iterable[str] = ()) -> Extraction:
        """`extract` for asyncio: runs in the loop's executor; cancelling the task cancels the
        model call in flight."""
        token = _native.CancelToken()
        loop = asyncio.get_running_loop()
        call = functools.partial(self._native.extract, text, list(clarifications), token)
        future = loop.run_in_executor(None, call)
        try:
            raw = await future
        except asyncio.CancelledError:
            token.cancel()
            raise
        return self._result(raw)

    def _result(self, raw: str) -> Extraction:
        report: Dict[str, Any] = json.loads(raw)
        outcome = report["outcome"]
        complete = outcome["status"] == "complete"
        value: Any = report["value"]
        validation_error: Optional[Exception] = None
        if self.model_class is not None:
            value, validation_error = _instance(self.model_class, value)
        fields = {
            f["name"]: FieldResult(
                name=f["name"],
                value=f["value"],
                spans=[(s["start"], s["end"]) for s in f["spans"]],
                grounding=f["grounding"],
                confidence=f["confidence"],
                attempts=f["attempts"],
                repairs=f["repairs"],
                problems=f["problems"],
            )
            for f in report["fields"]
        }
        return Extraction(
            value=value,
            fields=fields,
            complete=complete,
            question=outcome.get("question"),
            unresolved=outcome.get("unresolved", []),
            usage=TokenUsage.from_report(report["usage"]),
            model_calls=report["model_calls"],
            chunks=report["chunks"],
            validation_error=validation_error,
        )


def _instance(model_class: Type[Any], value: Dict[str, Any]) -> "tuple[Any, Optional[Exception]]":
    """The Pydantic instance for `value`: validated when it can be; else built as it is (a field
    left unresolved is None) with the validation error kept beside it."""
    try:
        return model_class.model_validate(value), None
    except Exception as error:  # pydantic.ValidationError; pydantic is optional
        return model_class.model_construct(**value), error


__all__: Sequence[str] = ["Extractor"]
