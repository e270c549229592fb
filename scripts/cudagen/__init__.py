"""scripts/gen-cuda-wrappers' parts: specs.py (the hand-written tables),
headers.py (what the toolkit declares and exports), emit.py (the C text)."""
