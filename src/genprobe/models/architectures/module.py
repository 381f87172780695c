"""A researcher's own `torch.nn.Module` as an architecture: `--arch py:module:function`.

The builder contract (examples/my_model.py is one):

    def build(shape: ModelShape, seed: int, *, width: int = 64, layers: int = 1) -> nn.Module

`shape` gives the task's vocabularies and lengths (`base.ModelShape`) and `seed` the member's
seed; the builder is also called with torch's generator seeded from it, so a builder that only
creates layers is seeded too. Its keyword arguments, each with a default, are its options
(`--model-option width=128`). The module it returns computes logits in one of two layouts, told
apart by how many arguments its `forward` takes:

- encoder-decoder, `forward(src, tgt_in)`: src (B, Ls) input ids, 0 = padding after the end;
  tgt_in (B, T) the output so far, from BOS on (the ids of `genprobe.data.seq2seq`: 0, 1, 2 =
  padding, BOS, EOS, then the output tokens) → logits (B, T, shape.tgt_vocab): position t
  scores the token after tgt_in[:, t];
- decoder-only, `forward(seq)`: seq (B, Ls + T) = the input right-aligned behind 0s, then the
  output so far from BOS on, in the joint vocabulary (`ModelShape.seq_vocab`: output id j > 0
  as src_vocab + j) → logits (B, Ls + T, shape.seq_vocab): position i scores the token at
  i + 1. genprobe reads the scores of the output tokens only.

S members keep their weights stacked, (S, *shape) per parameter, and run with
`torch.func.functional_call`, either one after another (`stacking=loop`: each member computes
exactly as it would alone) or as one batched call (`stacking=vmap`: `torch.func.vmap`, equal
to the member alone only to rounding, and a module that draws random numbers in training then
draws them for all members at once). `stacking=auto`, the default, takes vmap on a GPU when the
module allows it (vmap runs it, and it draws nothing random in training) and the loop
otherwise: on a CPU, vmap was no faster for most modules measured (benchmarks/module_stacking.py).
In the loop, a member's dropout draws come from its own stream. Buffers are shared by the
members: they must be the same for every seed and must not change in training.
"""

from __future__ import annotations

import functools
import inspect
import typing
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import torch
from torch import Tensor, nn
from torch.func import functional_call, stack_module_state, vmap

from genprobe.data.seq2seq import BOS, PAD
from genprobe.errors import GenprobeError, ModelContractError, check_choice
from genprobe.models.architectures.base import Architecture, ModelShape, fit_positions
from genprobe.models.member_stack import MemberStack
from genprobe.options import typed_options
from genprobe.user_code import raised, user_object

STACKINGS = ("auto", "loop", "vmap")
ENCODER_DECODER, DECODER_ONLY = "encoder-decoder", "decoder-only"
SEED_SCALE = 2**24  # a float32 uniform in [0, 1) times this is a whole number: a member's seed

Builder = Callable[..., nn.Module]


@dataclass(frozen=True)
class ModuleArchitecture(Architecture):
    """A builder's options. Built by `load`, which fills in every option's default."""

    member_format: ClassVar[str] = "genprobe.module/1"

    builder: str  # py:module:function
    settings: tuple[tuple[str, Any], ...] = ()  # the builder's options, (name, value), sorted
    stacking: str = "auto"

    def __post_init__(self) -> None:
        check_choice("stacking", self.stacking, STACKINGS)

    @classmethod
    def load(cls, spec: str, options: Mapping[str, Any]) -> ModuleArchitecture:
        """The builder `spec` names, with `options` (text is converted to each option's type).

        Raises:
            ModelContractError: it cannot be imported or does not take (shape, seed, options).
            ConfigError: an option the builder does not take (the message lists its options).
        """
        function = builder_function(spec)
        defaults = builder_options(spec, function)
        types = {**option_types(function, defaults), "stacking": str}
        given = typed_options(spec, options, types, "model option")
        stacking = given.pop("stacking", "auto")
        return cls(spec, tuple(sorted({**defaults, **given}.items())), stacking)

    def spec(self) -> str:
        return self.builder

    def options(self) -> dict[str, Any]:
        return {**dict(self.settings), "stacking": self.stacking}

    def describe(self) -> str:
        settings = ", ".join(f"{name}={value}" for name, value in self.settings)
        return f"{self.builder}({settings}), a module genprobe did not write"

    def model_class(self) -> type[ModuleStack]:
        return ModuleStack

    def build_module(self, shape: ModelShape, seed: int) -> nn.Module:
        """The builder's module for `seed`, built with torch's generator seeded from it.

        Raises:
            ModelContractError: the builder raised, or returned no module with parameters.
        """
        return checked_module(self.builder, lambda: self._call_builder(shape, seed), seed)

    def _call_builder(self, shape: ModelShape, seed: int) -> Any:
        return builder_function(self.builder)(shape, seed, **dict(self.settings))

    def takes(self, shape: ModelShape, src_len: np.ndarray, out_len: np.ndarray) -> np.ndarray:
        """A module that says how many positions it holds (an integer attribute
        `max_positions`) takes what fits in them: input and output together (decoder-only: the
        joint sequence) or each on its side; one that does not say, anything."""
        return fit_positions(src_len, out_len, *_positions(self, shape))


@functools.cache
def _positions(config: ModuleArchitecture, shape: ModelShape) -> tuple[int | None, bool]:
    """The positions a module of `config` says it holds (None: it does not say), and whether
    they hold input and output together."""
    module = config.build_module(shape, 0)
    limit = getattr(module, "max_positions", None)
    joint = layout(config.builder, module) == DECODER_ONLY
    return (limit if isinstance(limit, int) else None), joint


def builder_function(spec: str) -> Builder:
    """The function a `py:module:function` spec names.

    Raises:
        ConfigError: a spec that is not py:module:function.
        GenprobeError: the module cannot be imported.
        ModelContractError: it has no such function.
    """
    function = user_object(spec, "arch", "py:module:function")
    if not callable(function):
        raise ModelContractError(f"{spec}: its module has no function of that name")
    return function


def builder_options(spec: str, function: Builder) -> dict[str, Any]:
    """A builder's options and their defaults: its parameters after (shape, seed).

    Raises:
        ModelContractError: it does not take shape and seed first, or an option has no default.
    """
    try:
        parameters = list(inspect.signature(function).parameters.values())
    except (TypeError, ValueError):
        raise ModelContractError(f"{spec}: cannot read the builder's signature") from None
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    if len(parameters) < 2 or any(p.kind not in positional for p in parameters[:2]):
        raise ModelContractError(
            f"{spec}: a builder takes (shape, seed, *, option=default, …); it takes "
            f"({', '.join(map(str, parameters))})"
        )
    defaults = {}
    for p in parameters[2:]:
        if p.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
            continue
        if p.default is inspect.Parameter.empty:
            raise ModelContractError(f"{spec}: option {p.name!r} needs a default")
        defaults[p.name] = p.default
    if "stacking" in defaults:
        raise ModelContractError(f"{spec}: 'stacking' is genprobe's option; rename the builder's")
    return defaults


def option_types(function: Callable[..., Any], defaults: Mapping[str, Any]) -> dict[str, Any]:
    """Each option's type: its annotation, else its default's type (`Any` for None)."""
    try:
        hints = typing.get_type_hints(function)
    except Exception:  # annotations that do not resolve: the defaults tell the types
        hints = {}
    return {
        name: hints.get(name, Any if default is None else type(default))
        for name, default in defaults.items()
    }


def checked_module(spec: str, build: Callable[[], Any], seed: int) -> nn.Module:
    """`build()` with torch's generator seeded from `seed` (restored after), checked to be a
    module with parameters.

    Raises:
        ModelContractError: it raised, or gave no module with parameters.
    """
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        try:
            module = build()
        except GenprobeError:
            raise
        except Exception as error:
            raise ModelContractError(f"{spec}: the builder raised {raised(error)}") from None
    if not isinstance(module, nn.Module):
        raise ModelContractError(
            f"{spec}: the builder must return a torch.nn.Module; it returned "
            f"{type(module).__name__}"
        )
    if not any(True for _ in module.parameters()):
        raise ModelContractError(f"{spec}: the builder's module has no parameters")
    return module


def layout(spec: str, module: nn.Module) -> str:
    """Encoder-decoder or decoder-only, by the arguments `module.forward` needs.

    Raises:
        ModelContractError: it needs neither one nor two arguments.
    """
    parameters = inspect.signature(module.forward).parameters.values()
    needed = [
        p
        for p in parameters
        if p.default is inspect.Parameter.empty
        and p.kind in (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    if len(needed) == 2:
        return ENCODER_DECODER
    if len(needed) == 1:
        return DECODER_ONLY
    raise ModelContractError(
        f"{spec}: forward must take (src, tgt_in) or (seq); it takes "
        f"({', '.join(p.name for p in needed)})"
    )


def _arguments(layout: str, inputs: Sequence[Tensor]) -> str:
    """A member's inputs as forward got them: `src: int64 (8, 5), tgt_in: int64 (8, 3)`."""
    names = ("seq",) if layout == DECODER_ONLY else ("src", "tgt_in")
    return ", ".join(
        f"{name}: {str(x.dtype).removeprefix('torch.')} {tuple(x.shape)}"
        for name, x in zip(names, inputs, strict=True)
    )


@dataclass(frozen=True)
class ModuleState:
    """What greedy decoding carries: the inputs and the output so far (each member reruns the
    whole sequence at every step; a module genprobe did not write has no incremental step)."""

    src: Tensor  # (S, B, Ls)
    out: Tensor  # (S, B, t): BOS and the tokens decoded


class ModuleStack(MemberStack):
    """S members of a builder's module, parameter `a.b.w` stacked as `a__b__w` (S, *shape)."""

    capturable = False  # a module genprobe did not write is not recorded as a CUDA graph
    pads_on_gpu = False  # its members run on their own (loop) or as vmap batches them

    def __init__(self, config: ModuleArchitecture, shape: ModelShape, members: int) -> None:
        nn.Module.__init__(self)
        self.config, self.shape = config, shape
        base = config.build_module(shape, 0)
        self.layout = layout(config.builder, base)
        # name here → every name the module gives it (tied weights have several)
        self.aliases: dict[str, list[str]] = {}
        names: dict[int, str] = {}
        for dotted, param in base.named_parameters(remove_duplicate=False):
            if id(param) in names:
                self.aliases[names[id(param)]].append(dotted)
                continue
            names[id(param)] = name = dotted.replace(".", "__")
            self.aliases[name] = [dotted]
            empty = torch.empty(members, *param.shape, dtype=param.dtype)
            self.register_parameter(name, nn.Parameter(empty))
        # Shared by every member, and not part of a member's state: rebuilt with the model.
        for dotted, buffer in base.named_buffers():
            name = dotted.replace(".", "__")
            self.aliases[name] = [dotted]
            self.register_buffer(name, buffer.detach().clone(), persistent=False)
        self._base = (base.to("meta"),)  # a tuple: not a submodule, its tensors not ours
        self._checked = False

    def functional(self, training: bool) -> Callable[..., Tensor]:
        """f(params, *inputs) → logits: one member's module with `params` ({dotted name:
        tensor}) and the shared buffers, as `torch.func` calls it. The stack's first logits
        are checked (`_check`).

        Raises:
            ModelContractError: the module raised (the message names the builder, the inputs,
                the error and the line of the user's code it came from), or its first logits
                are not logits.
        """
        base = self._base[0].train(training)
        buffers = {self.aliases[name][0]: buffer for name, buffer in self.named_buffers()}

        def call(params: dict[str, Tensor], *inputs: Tensor) -> Tensor:
            try:
                logits = functional_call(base, (params, buffers), inputs)
            except GenprobeError:
                raise
            except Exception as error:
                raise ModelContractError(
                    f"{self.config.builder}: forward({_arguments(self.layout, inputs)}) raised "
                    f"{raised(error)}"
                ) from None
            if not self._checked:
                self._check(logits, tuple(inputs[-1].shape))
            return logits

        return call

    def stacked_params(self) -> dict[str, Tensor]:
        """{dotted name: (S, *shape)}: every member's parameters, as the module names them."""
        return {
            alias: param for name, param in self.named_parameters() for alias in self.aliases[name]
        }

    def inputs(self, src: Tensor, tgt_in: Tensor) -> tuple[Tensor, ...]:
        """What `forward` takes in this layout, from src (…, Ls) and tgt_in (…, T)."""
        if self.layout == DECODER_ONLY:
            return (joint_sequence(src, tgt_in, self.shape.src_vocab),)
        return (src, tgt_in)

    @classmethod
    def initialized(
        cls, config: ModuleArchitecture, shape: ModelShape, seeds: Sequence[int]
    ) -> ModuleStack:
        """Member k is the builder's module for seeds[k].

        Raises:
            ModelContractError: the builder's parameters or buffers differ between seeds.
        """
        model = cls(config, shape, len(seeds))
        modules = [config.build_module(shape, seed) for seed in seeds]
        names = [[(n, p.shape) for n, p in module.named_parameters()] for module in modules]
        for seed, named in zip(seeds, names, strict=True):
            if named != names[0]:
                raise ModelContractError(
                    f"{config.builder}: the parameters of seeds {seeds[0]} and {seed} differ"
                )
        params, buffers = stack_module_state(modules)  # dotted name → (S, *shape)
        with torch.no_grad():
            for name, stacked in model.named_parameters():
                stacked.copy_(params[model.aliases[name][0]])
        for name, shared in model.named_buffers():
            dotted = model.aliases[name][0]
            if not all(torch.equal(member, shared) for member in buffers[dotted]):
                raise ModelContractError(
                    f"{config.builder}: buffer {dotted} differs between seeds (members share "
                    "buffers)"
                )
        return model

    # -- how the members run --------------------------------------------------------------------

    def stacking(self) -> str:
        """How this stack runs its members: "loop" or "vmap" (see the module's docstring)."""
        chosen = self.config.stacking
        if chosen != "auto":
            return chosen
        if next(self.parameters()).device.type != "cuda":
            return "loop"
        probe = probe_module(self.config, self.shape)
        return "vmap" if probe.vmaps and not probe.random else "loop"

    def noise_shapes(self, batch: int, src_len: int, tgt_len: int) -> dict[str, tuple[int, ...]]:
        """Per member, one uniform a step: the seed of the member's random draws, if the
        module draws any."""
        return {"seed": (1,)} if probe_module(self.config, self.shape).random else {}

    def _logits(
        self, src: Tensor, tgt_in: Tensor, noise: Mapping[str, Tensor] | None, training: bool
    ) -> Tensor:
        """Every member's logits (S, B, T, tgt_vocab) for src (S, B, Ls), tgt_in (S, B, T)."""
        call, params = self.functional(training), self.stacked_params()
        inputs = self.inputs(src, tgt_in)
        seeds = None if not noise or "seed" not in noise else noise["seed"][:, 0] * SEED_SCALE
        if self.stacking() == "vmap":
            with _seeded(None if seeds is None else seeds[0], src.device):
                randomness = "error" if seeds is None else "different"
                logits = vmap(call, randomness=randomness)(params, *inputs)
        else:
            # unbind, not param[k]: the backward of S selects would write S full-size zeros
            unbound = {name: param.unbind(0) for name, param in params.items()}
            members = []
            for k in range(self.members):
                with _seeded(None if seeds is None else seeds[k], src.device):
                    member = {name: slices[k] for name, slices in unbound.items()}
                    members.append(call(member, *(x[k] for x in inputs)))
            logits = torch.stack(members)
        if self.layout == DECODER_ONLY:
            logits = logits[:, :, src.shape[2] :, self.shape.src_vocab :]
        return logits

    def _check(self, logits: Any, batch: tuple[int, ...]) -> None:
        """Raises ModelContractError unless one member's `logits` are (*batch, vocabulary),
        `batch` being its last input's shape: (B, T), or (B, L) decoder-only."""
        vocab = self.shape.seq_vocab if self.layout == DECODER_ONLY else self.shape.tgt_vocab
        expected = (*batch, vocab)
        got = tuple(logits.shape) if isinstance(logits, Tensor) else type(logits).__name__
        if got != expected:
            names = "(B, L, seq_vocab)" if self.layout == DECODER_ONLY else "(B, T, tgt_vocab)"
            raise ModelContractError(
                f"{self.config.builder}: forward must return logits {names} = {expected}; "
                f"it returned {got}"
            )
        self._checked = True

    # -- training -------------------------------------------------------------------------------

    def teacher_forced(
        self, src: Tensor, tgt_in: Tensor, noise: Mapping[str, Tensor] | None = None
    ) -> Tensor:
        return self._logits(src, tgt_in, noise, training=True)

    # -- decoding (see `genprobe.decoding.greedy`) ---------------------------------------------

    def start(self, src: Tensor, max_len: int | None = None) -> tuple[ModuleState, Tensor]:
        src = src.unsqueeze(0).expand(self.members, -1, -1)
        bos = torch.full(src.shape[:2], BOS, device=src.device)
        return ModuleState(src, bos.unsqueeze(2)[:, :, :0]), bos

    def step(self, state: ModuleState, token: Tensor) -> tuple[Tensor, ModuleState]:
        out = torch.cat([state.out, token.unsqueeze(2)], dim=2)
        logits = self._logits(state.src, out, None, training=False)[:, :, -1]
        return logits, ModuleState(state.src, out)


@contextmanager
def _seeded(seed: Tensor | None, device: torch.device) -> Iterator[None]:
    """Torch's generators seeded from a member's seed for one call, then restored."""
    if seed is None:
        yield
        return
    with torch.random.fork_rng(devices=[device] if device.type == "cuda" else []):
        torch.manual_seed(int(seed))
        yield


def joint_sequence(src: Tensor, tgt_in: Tensor, src_vocab: int) -> Tensor:
    """A decoder-only module's input (…, Ls + T): src (…, Ls) right-aligned behind padding,
    then tgt_in (…, T) as joint-vocabulary ids (output id j > 0 as src_vocab + j)."""
    length = src.shape[-1]
    real = (src != PAD).sum(-1, keepdim=True)
    index = torch.arange(length, device=src.device) - (length - real)  # (…, Ls)
    aligned = src.gather(-1, index.clamp(min=0)).masked_fill(index < 0, PAD)
    output = torch.where(tgt_in == PAD, PAD, tgt_in + src_vocab)
    return torch.cat([aligned, output], dim=-1)


@dataclass(frozen=True)
class Probe:
    vmaps: bool  # vmap runs a training step of two members
    random: bool  # it draws random numbers in training (two seeds give two outputs)


@functools.cache
def probe_module(config: ModuleArchitecture, shape: ModelShape) -> Probe:
    """What `auto` stacking and the noise draws need to know of a module, tried on a few
    examples on the CPU."""
    model = ModuleStack.initialized(config, shape, [0, 1])
    src = torch.ones(2, 3, max(1, min(shape.src_len, 4)), dtype=torch.long)
    tgt_in = torch.full((2, 3, 2), BOS, dtype=torch.long)
    tgt_in[:, :, 1] = 3 % shape.tgt_vocab
    call, params, inputs = model.functional(True), model.stacked_params(), model.inputs(src, tgt_in)
    first = {name: param[0] for name, param in params.items()}
    draws = []
    for seed in (0, 1):
        with torch.no_grad(), _seeded(torch.tensor(seed), src.device):
            draws.append(call(first, *(x[0] for x in inputs)))
    random = not torch.equal(*draws)
    try:
        with warnings.catch_warnings():  # torch warns of ops it batches slowly: no matter here
            warnings.simplefilter("ignore")
            logits = vmap(call, randomness="different")(params, *inputs)
            logits.float().sum().backward()
    except Exception:  # whatever keeps vmap from batching it: the members run one by one
        return Probe(False, random)
    return Probe(True, random)
