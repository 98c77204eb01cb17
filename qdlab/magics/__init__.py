"""IPython magics that compile and explain kernels from notebook cells."""
