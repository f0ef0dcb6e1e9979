"""The report engine: classify, score, risks, themes, trends, summaries, suggestions.

It reads models only; it never imports an adapter, an SDK or a template.
"""

from bot.engine.digest import answer_pull, build_digest, reviews_recorded, week_pulls

__all__ = ["answer_pull", "build_digest", "reviews_recorded", "week_pulls"]
