"""Type stubs for the native module (the Rust half). Use the `quarry` package's functions."""

from typing import List, Optional, Sequence, Tuple

__version__: str

def extract(text: str, target: str, now: str, region: Optional[str] = None, detail: bool = False) -> str: ...
def check(text: str, target: str, output: str) -> str: ...
def scan(text: str, targets: Sequence[str], now: str, region: Optional[str] = None) -> str: ...
def ground(
    text: str,
    values: Sequence[str],
    mode: str = "quarry",
    fuzzy: bool = True,
    fuzzy_threshold: Optional[float] = None,
    accept_partial: Optional[bool] = None,
) -> str: ...
def parse_json(reply: str, schema: Optional[str] = None, strict: bool = False) -> str: ...
def error_codes() -> List[Tuple[str, int, str]]: ...

class CancelToken:
    def __init__(self) -> None: ...
    def cancel(self) -> None: ...
    @property
    def cancelled(self) -> bool: ...

class NativeExtractor:
    def __init__(
        self,
        schema: str,
        model: str,
        *,
        base_url: Optional[str] = None,
        api_key: Optional[str] = None,
        headers: Sequence[Tuple[str, str]] = ...,
        max_attempts: int = 3,
        max_tokens_budget: Optional[int] = None,
        max_completion_tokens: Optional[int] = None,
        temperature: Optional[float] = None,
        retries: int = 2,
        concurrency: int = 8,
        timeout: Optional[float] = None,
    ) -> None: ...
    def extract(
        self, text: str, clarifications: Sequence[str] = ..., cancel: Optional[CancelToken] = None
    ) -> str: ...
