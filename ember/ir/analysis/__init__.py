"""Facts about IR values that passes and lowering rely on, each derived from the IR
itself (never inherited from a type that an op changed): constant values, known
divisibility of integers, and where a pointer points (its root, the alignment it keeps,
whether its memory can change during the kernel)."""
