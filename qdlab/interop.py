"""`qd.interop`: helpers for sharing a GPU queue with another framework, as in Quadrants.

`get_mps_command_queue()` gives PyTorch MPS's Metal command queue in Quadrants, for
`qd.init(arch=qd.metal, external_metal_command_queue=...)`; qdlab has no Metal backend, so there is
no queue to share and it answers 0, what Quadrants answers where extraction is not possible
(another platform, no MPS)."""

__all__ = ["get_mps_command_queue"]


def get_mps_command_queue() -> int:
    """0: qdlab runs no Metal queue to share PyTorch MPS's with (as Quadrants off macOS)."""
    return 0
