"""The nn family: convolution, pooling, norms, losses, padding, upsampling, attention, nn activations.

`rows.py` its rows of the derivative table, `formulas.py` their backward formulas longer than a
line, `kernels.py` their forwards (window geometry, `im2col` / `col2im`, convolution as one
batched matmul, pooling, norms, losses), `functions.py` the few ops torch has outside
torch.nn.functional (clamp_min) and those TensorMath records an nn backward with. The argument
handling and torch's messages of `engine.nn.functional` stay in engine/nn/functional/.
"""
