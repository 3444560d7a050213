from pathlib import Path

# Generated programs and their simulator results, for GPU runs (python -m ember.fuzz gpu).
CORPUS = Path(__file__).parent / "corpus.jsonl.gz"
