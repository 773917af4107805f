"""One walk over a content region, shared by the DOM preparation steps of ``convert.dom``.

Walking an lxml tree costs about the same whatever the tags asked for (every node is visited),
and on a docs page one walk costs as much as the work of most preparation steps. So
``convert.dom.prepare`` walks the region once for all the tags its steps visit, and each step
takes its elements from this census instead of walking again.

A step must see what its own walk would see at that moment. The census gives, in document
order, the elements whose *current* tag is asked for and that are still inside the region
(earlier steps drop code blocks, permalinks, admonition titles...). That is the same set
because no step moves an element, and no step creates or renames an element into a tag that a
*later* step visits; the only exceptions (Pygments line-number tables and Doxygen fragments, in
``extract_code``) make that step walk on its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Collection

    from lxml.etree import _Element as HtmlElement


class Census:
    """Elements under ``region`` (itself included) with the given tags, from one walk."""

    __slots__ = ("_elements", "region")

    def __init__(self, region: HtmlElement, tags: Collection[str]) -> None:
        self.region = region
        self._elements = list(region.iter(*tags))

    def of(self, tags: Collection[str], attached_only: bool = True) -> list[HtmlElement]:
        """The elements now tagged one of ``tags``, in document order.

        ``attached_only``: leave out elements no longer inside the region. A step may pass False
        only when no earlier step can have removed such an element.
        """
        found = [el for el in self._elements if el.tag in tags]
        if attached_only:
            region = self.region
            found = [el for el in found if _inside(el, region)]
        return found


def _inside(el: HtmlElement | None, region: HtmlElement) -> bool:
    """True when ``el`` is ``region`` or below it (lxml gives one proxy per live node: ``is`` works)."""
    while el is not None:
        if el is region:
            return True
        el = el.getparent()
    return False
