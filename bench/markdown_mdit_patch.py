"""pytest plugin (-p markdown_mdit_patch, bench/ on sys.path): indexd's markdown reader
replaced by bench/markdown_mdit.py's, so the markdown tests judge the candidate."""

import markdown_mdit

from indexd.parse import markdown

markdown.extract_markdown = markdown_mdit.extract_markdown
