"""Module: registration of parameters, buffers and submodules, and what builds on it.

Follows torch/nn/modules/module.py: attribute assignment routes Parameters, Modules and
buffers into ordered dicts; traversal, train/eval, state_dict, dtype/device conversion
and forward hooks (the module's own, and the global ones of
`register_module_forward_hook`) are defined over those dicts. Conversion replaces `param._data` in
place, so Parameter identity (and optimizers holding them) survive `.double()` / `.to()`.
"""

from __future__ import annotations

import collections
import itertools
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from .. import backend
from ..autograd import grad_mode
from ..autograd.hooks import RemovableHandle, add_hook
from ..ops.tensor_methods import parse_to_args
from ..tensor import Tensor, typename, wrap
from .backward_hook import ModuleBackwardHooks
from .parameter import Parameter, zero_grads

# Hooks on every module's forward, as torch.nn.modules.module's globals (run before each module's own).
_global_forward_pre_hooks: dict = {}
_global_forward_hooks: dict = {}
_global_forward_hooks_with_kwargs: set = set()
_global_forward_hooks_always_called: set = set()


def register_module_forward_pre_hook(hook: Callable) -> RemovableHandle:
    """hook(module, args) -> None or new args, before every module's forward (torch's global pre-hook)."""
    return add_hook(_global_forward_pre_hooks, hook)


def register_module_forward_hook(
    hook: Callable, *, with_kwargs: bool = False, always_call: bool = False
) -> RemovableHandle:
    """hook(module, args, output) -> None or a new output, after every module's forward (torch's global hook)."""
    handle = add_hook(_global_forward_hooks, hook)
    if with_kwargs:
        _global_forward_hooks_with_kwargs.add(handle.id)
    if always_call:
        _global_forward_hooks_always_called.add(handle.id)
    return handle


class _IncompatibleKeys(collections.namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(text: str, spaces: int) -> str:
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    first = lines.pop(0)
    return first + "\n" + "\n".join((spaces * " ") + line if line.strip() else "" for line in lines)


def _prepend(hooks: dict, key) -> None:
    value = hooks.pop(key)
    items = list(hooks.items())
    hooks.clear()
    hooks[key] = value
    hooks.update(items)


class Module:
    """Base class for all layers; subclasses define `forward` and assign parameters and submodules."""

    _version: int = 1
    training: bool

    def __init__(self, *args, **kwargs) -> None:
        if args or kwargs:
            raise TypeError(
                f"{type(self).__name__}.__init__() takes 1 positional argument but {len(args) + 1} were given"
            )
        setattr_ = object.__setattr__
        setattr_(self, "training", True)
        setattr_(self, "_parameters", {})
        setattr_(self, "_buffers", {})
        setattr_(self, "_non_persistent_buffers_set", set())
        setattr_(self, "_modules", {})
        setattr_(self, "_forward_hooks", {})
        setattr_(self, "_forward_hooks_with_kwargs", set())
        setattr_(self, "_forward_hooks_always_called", set())
        setattr_(self, "_forward_pre_hooks", {})
        setattr_(self, "_forward_pre_hooks_with_kwargs", set())
        setattr_(self, "_backward_hooks", {})
        setattr_(self, "_backward_pre_hooks", {})
        setattr_(self, "_is_full_backward_hook", None)

    def forward(self, *args, **kwargs):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function'
        )

    # -- registration ------------------------------------------------------------------------
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer", self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(
                f"cannot assign '{typename(tensor)}' object to buffer '{name}' (engine Tensor or None required)"
            )
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter", self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(
                f"cannot assign '{typename(param)}' object to parameter '{name}' "
                "(engine.nn.Parameter or None required)"
            )
        if param is not None and param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                f"explicitly. To express '{name}' as a function of another Tensor, compute the value in the "
                "forward() method."
            )
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def _check_name(self, name, kind: str, table: dict) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {typename(name)}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in table:
            raise KeyError(f"attribute '{name}' already exists")

    def get_submodule(self, target: str) -> Module:
        if target == "":
            return self
        module = self
        for item in target.split("."):
            if not hasattr(module, item):
                raise AttributeError(f"{module._get_name()} has no attribute `{item}`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return module

    def get_parameter(self, target: str) -> Parameter:
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if not hasattr(module, name):
            raise AttributeError(f"{module._get_name()} has no attribute `{name}`")
        param = getattr(module, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        path, _, name = target.rpartition(".")
        module = self.get_submodule(path)
        if name not in module._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return module._buffers[name]

    # -- attribute routing -----------------------------------------------------------------------
    def __getattr__(self, name: str):
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            if table in d and name in d[table]:
                return d[table][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value) -> None:
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._remove_from(name, d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{typename(value)}' as parameter '{name}' "
                    "(engine.nn.Parameter or None expected)"
                )
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._remove_from(name, d, self._parameters, self._buffers, self._non_persistent_buffers_set)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(
                    f"cannot assign '{typename(value)}' as child module '{name}' (engine.nn.Module or None expected)"
                )
            modules[name] = value
            return
        buffers = d.get("_buffers")
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(
                    f"cannot assign '{typename(value)}' as buffer '{name}' (engine.nn.Buffer, engine.Tensor or None "
                    "expected)"
                )
            buffers[name] = value
            return
        object.__setattr__(self, name, value)

    @staticmethod
    def _remove_from(name, *tables) -> None:
        for table in tables:
            if name in table:
                if isinstance(table, dict):
                    del table[name]
                else:
                    table.discard(name)

    def __delattr__(self, name: str) -> None:
        for table in (self._parameters, self._buffers, self._modules):
            if name in table:
                del table[name]
                self._non_persistent_buffers_set.discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = dir(self.__class__) + list(self.__dict__) + list(self._parameters) + list(self._modules)
        keys += list(self._buffers)
        return sorted(key for key in keys if not key[0].isdigit())

    # -- traversal -------------------------------------------------------------------------------
    def named_modules(self, memo: set | None = None, prefix: str = "", remove_duplicate: bool = True):
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(memo, prefix + ("." if prefix else "") + name, remove_duplicate)

    def modules(self, remove_duplicate: bool = True) -> Iterator[Module]:
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def named_children(self) -> Iterator[tuple[str, Module]]:
        seen = set()
        for name, module in self._modules.items():
            if module is not None and module not in seen:
                seen.add(module)
                yield name, module

    def children(self) -> Iterator[Module]:
        for _, module in self.named_children():
            yield module

    def _named_members(self, members: Callable, prefix: str, recurse: bool, remove_duplicate: bool):
        seen = set()
        modules = (
            self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
            if recurse
            else [(prefix, self)]
        )
        for module_prefix, module in modules:
            for name, value in members(module).items():
                if value is None or value in seen:
                    continue
                if remove_duplicate:
                    seen.add(value)
                yield module_prefix + ("." if module_prefix else "") + name, value

    def named_parameters(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        yield from self._named_members(lambda m: m._parameters, prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_buffers(self, prefix: str = "", recurse: bool = True, remove_duplicate: bool = True):
        yield from self._named_members(lambda m: m._buffers, prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def apply(self, fn: Callable[[Module], None]) -> Module:
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # -- modes and gradients ----------------------------------------------------------------------
    def train(self, mode: bool = True) -> Module:
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Grads become None (the default, as in PyTorch 2.x), or are zeroed in place."""
        zero_grads(self.parameters(), set_to_none)

    # -- conversion -------------------------------------------------------------------------------
    def _apply(self, convert: Callable, recurse: bool = True) -> Module:
        """Convert every parameter (its array, in place) and buffer (a new tensor) with `convert(array)`."""
        if recurse:
            for module in self.children():
                module._apply(convert)
        for param in self._parameters.values():
            if param is None:
                continue
            param._data = convert(param._data)
            if param._grad is not None:
                param._grad._data = convert(param._grad._data)
        for name, buf in self._buffers.items():
            if buf is not None:
                new = convert(buf._data)
                if new is not buf._data:
                    self._buffers[name] = wrap(new)
        return self

    @staticmethod
    def _converter(device, dtype) -> Callable:
        def convert(array):
            if device is not None:
                array = backend.to_device(array, device)
            if dtype is not None and array.dtype.kind == "f":
                array = array.astype(dtype.np, copy=False)
            return array

        return convert

    def to(self, *args, **kwargs) -> Module:
        """`to(device)`, `to(dtype)`, `to(device, dtype)` or `to(tensor)`; floating point dtypes only."""
        dtype, device = parse_to_args(args, kwargs)
        if dtype is not None and not dtype.is_floating_point:
            raise TypeError(
                f"nn.Module.to only accepts floating point or complex dtypes, but got desired dtype={dtype}"
            )
        return self._apply(self._converter(None if device is None else backend.device(device), dtype))

    def cuda(self, device=None) -> Module:
        return self.to(
            "cuda" if device is None else f"cuda:{int(device)}" if isinstance(device, int) else device
        )

    def cpu(self) -> Module:
        return self.to("cpu")

    def double(self) -> Module:
        return self._apply(self._converter(None, backend.float64))

    def float(self) -> Module:
        return self._apply(self._converter(None, backend.float32))

    def half(self) -> Module:
        return self._apply(self._converter(None, backend.float16))

    # -- calling, with forward hooks ----------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        if not (
            self._forward_hooks
            or self._forward_pre_hooks
            or self._backward_hooks
            or self._backward_pre_hooks
            or _global_forward_hooks
            or _global_forward_pre_hooks
        ):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args: tuple, kwargs: dict):
        for hook_id, hook in (*_global_forward_pre_hooks.items(), *self._forward_pre_hooks.items()):
            if hook_id in self._forward_pre_hooks_with_kwargs:
                result = hook(self, args, kwargs)
                if result is not None:
                    if not (isinstance(result, tuple) and len(result) == 2):
                        raise RuntimeError(
                            "forward pre-hook must return None or a tuple of (new_args, new_kwargs), but got "
                            f"{result}."
                        )
                    args, kwargs = result
            else:
                result = hook(self, args)
                if result is not None:
                    args = result if isinstance(result, tuple) else (result,)
        called: set = set()
        output = None
        backward_hooks = None
        if self._backward_hooks or self._backward_pre_hooks:
            backward_hooks = ModuleBackwardHooks(
                self, list(self._backward_hooks.values()), list(self._backward_pre_hooks.values())
            )
            args = backward_hooks.setup_input_hook(args)
        try:
            output = self.forward(*args, **kwargs)
            for hook_id, hook in self._all_forward_hooks():
                called.add(hook_id)
                if self._takes_kwargs(hook_id):
                    result = hook(self, args, kwargs, output)
                else:
                    result = hook(self, args, output)
                if result is not None:
                    output = result
            if backward_hooks is not None:
                output = backward_hooks.setup_output_hook(output)
        except Exception:
            for hook_id, hook in self._all_forward_hooks():
                always = (
                    hook_id in self._forward_hooks_always_called
                    or hook_id in _global_forward_hooks_always_called
                )
                if always and hook_id not in called:
                    try:
                        if self._takes_kwargs(hook_id):
                            hook(self, args, kwargs, output)
                        else:
                            hook(self, args, output)
                    except Exception:  # silenced, as torch does (it warns)
                        pass
            raise
        return output

    def _all_forward_hooks(self) -> tuple:
        """The global forward hooks, then the module's own (torch's order)."""
        return (*_global_forward_hooks.items(), *self._forward_hooks.items())

    def _takes_kwargs(self, hook_id: int) -> bool:
        return hook_id in self._forward_hooks_with_kwargs or hook_id in _global_forward_hooks_with_kwargs

    def register_forward_pre_hook(
        self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False
    ) -> RemovableHandle:
        """hook(module, args) -> None or new args (with_kwargs: hook(module, args, kwargs) -> (args, kwargs))."""
        handle = add_hook(self._forward_pre_hooks, hook)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs.add(handle.id)
        if prepend:
            _prepend(self._forward_pre_hooks, handle.id)
        return handle

    def register_forward_hook(
        self, hook: Callable, *, prepend: bool = False, with_kwargs: bool = False, always_call: bool = False
    ) -> RemovableHandle:
        """hook(module, args, output) -> None or a new output (with_kwargs: hook(module, args, kwargs, output))."""
        handle = add_hook(self._forward_hooks, hook)
        if with_kwargs:
            self._forward_hooks_with_kwargs.add(handle.id)
        if always_call:
            self._forward_hooks_always_called.add(handle.id)
        if prepend:
            _prepend(self._forward_hooks, handle.id)
        return handle

    def register_full_backward_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """hook(module, grad_input, grad_output) -> None or a new grad_input, when the inputs' gradients are known."""
        if self._is_full_backward_hook is False:
            raise RuntimeError(
                "Cannot use both regular backward hooks and full backward hooks on a single Module. Please use "
                "only one of them."
            )
        self._is_full_backward_hook = True
        handle = add_hook(self._backward_hooks, hook)
        if prepend:
            _prepend(self._backward_hooks, handle.id)
        return handle

    def register_full_backward_pre_hook(self, hook: Callable, prepend: bool = False) -> RemovableHandle:
        """hook(module, grad_output) -> None or a new grad_output, before the module's gradients are computed."""
        handle = add_hook(self._backward_pre_hooks, hook)
        if prepend:
            _prepend(self._backward_pre_hooks, handle.id)
        return handle

    # -- state dict ---------------------------------------------------------------------------------
    def _save_to_state_dict(self, destination: dict, prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()

    def state_dict(self, *, destination=None, prefix: str = "", keep_vars: bool = False) -> dict:
        """Parameters and persistent buffers by dotted name, detached (sharing storage), as torch's."""
        if destination is None:
            destination = collections.OrderedDict()
            destination._metadata = collections.OrderedDict()
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = {"version": self._version}
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".", keep_vars=keep_vars)
        return destination

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ) -> None:
        persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local_state = {
            k: v for k, v in itertools.chain(self._parameters.items(), persistent.items()) if v is not None
        }
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(
                    f'While copying the parameter named "{key}", expected engine.Tensor or Tensor-like object '
                    f"from checkpoint but received {type(value)}"
                )
                continue
            if param.dim() == 0 and value.dim() == 1 and value.shape[0] == 1:
                value = value[0]
            if value.shape != param.shape:
                error_msgs.append(
                    f"size mismatch for {key}: copying a param with shape {value.shape} from checkpoint, "
                    f"the shape in current model is {param.shape}."
                )
                continue
            try:
                with grad_mode.no_grad():
                    if assign:
                        if isinstance(param, Parameter) and not isinstance(value, Parameter):
                            value = Parameter(value, requires_grad=param.requires_grad)
                        setattr(self, name, value)
                    else:
                        param.copy_(value)
            except Exception as ex:
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose dimensions in the model are '
                    f"{param.size()} and whose dimensions in the checkpoint are {value.size()}, an exception "
                    f"occurred : {ex.args}."
                )
        if strict:
            for key in state_dict:
                if key.startswith(prefix):
                    head = key[len(prefix) :].split(".", 1)
                    if (len(head) > 1 and head[0] not in self._modules) or (
                        len(head) == 1 and head[0] not in local_state
                    ):
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True, assign: bool = False):
        """Copy (or with assign=True, adopt) tensors by name; PyTorch's key checks and error text."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)

        def load(module: Module, local: dict, prefix: str = "") -> None:
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = True
            module._load_from_state_dict(local, prefix, local_metadata, True, missing, unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local.items() if k.startswith(child_prefix)}, child_prefix)

        load(self, dict(state_dict))
        if strict:
            if unexpected:
                errors.insert(
                    0, "Unexpected key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in unexpected))
                )
            if missing:
                errors.insert(
                    0, "Missing key(s) in state_dict: {}. ".format(", ".join(f'"{k}"' for k in missing))
                )
        if errors:
            raise RuntimeError(
                "Error(s) in loading state_dict for {}:\n\t{}".format(
                    type(self).__name__, "\n\t".join(errors)
                )
            )
        return _IncompatibleKeys(missing, unexpected)

    # -- repr ----------------------------------------------------------------------------------------
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [
            "(" + key + "): " + _addindent(repr(module), 2) for key, module in self._modules.items()
        ]
        lines = extra_lines + child_lines
        main = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main += extra_lines[0]
            else:
                main += "\n  " + "\n  ".join(lines) + "\n"
        return main + ")"
