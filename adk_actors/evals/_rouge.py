"""ROUGE-1 F1 as google-adk's ``response_match_score`` computes it.

Tokens, in order: the text is NFKC-normalised and lower-cased; every character of a
CJK script (Han, Hiragana, Katakana, Hangul) is a token of its own; in scripts
written without spaces (Thai, Lao, Khmer, Myanmar) each base letter starts a token
and the combining marks after it stay with it; elsewhere a token is a run of letters,
digits and combining marks, anything else separating tokens. An ASCII token longer
than three characters is reduced to its Porter stem (NLTK's ``PorterStemmer``, the
stemmer google-adk's ``rouge-score`` dependency uses), so "rains" and "rain" match.

The stemmer comes from ``nltk`` (the ``eval`` extra: ``pip install
'adk-actors[eval]'``). Without it words are compared unstemmed, and a warning says
so once: scores can then be lower than google-adk's for the same texts.
"""

from __future__ import annotations

import importlib
import logging
import re
import unicodedata
from collections import Counter
from collections.abc import Callable
from functools import cache

from .._extras import extra_hint

__all__ = ["rouge1_f", "rouge_tokens"]

logger = logging.getLogger(__name__)

_ASCII_WORD = re.compile(r"^[a-z0-9]+$")
_NOT_ASCII_ALNUM = re.compile(r"[^a-z0-9]+")
_CJK = ((0x4E00, 0x9FFF), (0x3040, 0x309F), (0x30A0, 0x30FF), (0xAC00, 0xD7AF))
_UNSPACED = ((0x0E00, 0x0E7F), (0x0E80, 0x0EFF), (0x1780, 0x17FF), (0x1000, 0x109F))


def _within(char: str, ranges: tuple[tuple[int, int], ...]) -> bool:
    code = ord(char)
    return any(low <= code <= high for low, high in ranges)


def _is_mark(char: str) -> bool:
    return unicodedata.category(char).startswith("M")


@cache
def _stemmer() -> Callable[[str], str] | None:
    try:
        porter = importlib.import_module("nltk.stem.porter")
    except ImportError:
        logger.warning("response_match_score: %s; words are compared without stemming, so scores can be lower "
                       "than google-adk's", extra_hint("eval"))
        return None
    stem: Callable[[str], str] = porter.PorterStemmer().stem
    return stem


def _ascii_tokens(word: str) -> list[str]:
    stem = _stemmer()
    pieces = _NOT_ASCII_ALNUM.sub(" ", word.lower()).split()
    if stem is not None:
        pieces = [stem(piece) if len(piece) > 3 else piece for piece in pieces]
    return [piece for piece in pieces if _ASCII_WORD.match(piece)]


def rouge_tokens(text: str) -> list[str]:
    """The tokens ROUGE-1 compares (see the module)."""
    spaced: list[str] = []
    for char in unicodedata.normalize("NFKC", text).lower():
        if _within(char, _CJK):
            spaced += [" ", char, " "]
        elif _within(char, _UNSPACED):
            spaced += [char] if _is_mark(char) else [" ", char]
        elif char.isalnum() or _is_mark(char):
            spaced.append(char)
        else:
            spaced.append(" ")
    tokens: list[str] = []
    for word in "".join(spaced).split():
        tokens += _ascii_tokens(word) if word.isascii() else [word]
    return tokens


def rouge1_f(reference: str, candidate: str) -> float:
    """ROUGE-1 F1 of ``candidate`` against ``reference``: the harmonic mean of the shared
    tokens' share of each (0.0 when they share none, or either has no token)."""
    expected, actual = Counter(rouge_tokens(reference)), Counter(rouge_tokens(candidate))
    overlap = sum((expected & actual).values())
    if not overlap:
        return 0.0
    precision, recall = overlap / sum(actual.values()), overlap / sum(expected.values())
    return 2 * precision * recall / (precision + recall)
