"""The residual graph network: policy over holes (+ swap), value, and cell ownership.

It knows nothing of games or search: it reads node features ``[B, N, F]``, the static stacked
adjacency of the board's graph and the dynamic cell-side contacts (see ``encode.py``). Every layer
is equivariant to node permutations (no node identities, shared weights, mean aggregation per
edge type, a mean-pooled global term), so one set of weights plays ConHex and Hex of any size, and
a board symmetry permutes the policy and ownership and leaves the value unchanged.

Block (pre-norm residual): y = LayerNorm(x); the mean over each edge type's neighbours (3 static
types as dense matmuls by the blocks of the board's graph, see ``encode.Graph``, plus the dynamic
cell-side contacts) and the global mean are weighted per channel by learned gates and summed into
m; then x += W2 GELU(W1 [y, m]). That is 6 h^2 multiply-adds per node and layer, plus about 70
(ConHex) per node and channel for the aggregation. Every op runs in the compute dtype (bf16 under autocast) on CPU and
CUDA alike, with dense products; only the CPU's float32 inference path (``Block.infer_``) multiplies by
sparse copies of the graph's blocks (``Graph.sparse``), a third of the dense products' time there.
Models are named by size: ``l8h128`` = 8 blocks of width 128; and by two options (issue 56, reach):
``r<R>`` runs the blocks R times over with the same weights (``l4h64r3``: 12 rounds of messages,
the parameters of 4 blocks; after the recurrent networks that run a block more times on larger
problems), and ``c`` reads the connection features (``env.connection``: how far each player is from
joining its sides, through every hole and cell), so that a few rounds see across the board.
A checkpoint describes its options; one without them is a plain model, loaded as before.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace


import torch
from torch import Tensor, nn

from conhex_zero.nn.encode import Encoded, Graph, num_features
from conhex_zero.nn.model_names import model_name, parse_model_spec


@dataclass(frozen=True)
class ModelConfig:
    """Size and options of the network."""

    layers: int = 8
    """Residual message-passing blocks."""
    hidden: int = 128
    """Width of every node's hidden vector."""
    repeat: int = 1
    """Times the blocks run over, with the same weights (rounds of messages: ``layers * repeat``)."""
    connection: bool = False
    """Whether the network reads the connection features (``Encoder(connection=True)``)."""

    @property
    def name(self) -> str:
        return model_name(self.layers, self.hidden, self.repeat, self.connection)

    @property
    def num_features(self) -> int:
        """Input columns the network reads (``encode.num_features``)."""
        return num_features(self.connection)

    @classmethod
    def from_name(cls, name: str) -> "ModelConfig":
        return cls(**parse_model_spec(name))

    def to_dict(self) -> dict:
        """The checkpoint's description: size, and the options where they are not the defaults (so
        a plain model's description is what it always was)."""
        spec = asdict(self)
        if self.repeat == 1:
            del spec["repeat"]
        if not self.connection:
            del spec["connection"]
        return spec


class Block(nn.Module):
    """m = sum_t g_t * (A_t y) + g_c * contacts(y) + g_g * mean(y); x += W2 GELU(W1 [y, m])."""

    def __init__(self, hidden: int, num_types: int):
        super().__init__()
        self.norm = nn.LayerNorm(hidden)
        self.gates = nn.Parameter(torch.ones(num_types + 2, hidden))  # per edge type, contacts, global
        self.mix = nn.Linear(2 * hidden, hidden)
        self.out = nn.Linear(hidden, hidden)

    def forward(self, x: Tensor, graph: Graph, contact_to_cells: Tensor, contact_to_sides: Tensor) -> Tensor:
        N, B, h = x.shape
        H, C = graph.num_holes, graph.num_cells
        y = self.norm(x)  # [N, B, h]
        g = self.gates.to(y.dtype)  # [T + 2, h]: incidence, adjacency, sides, contacts, global
        holes, cells, sides = y[:H], y[H:H + C], y[H + C:]
        dtype = None if torch.is_autocast_enabled(y.device.type) else y.dtype

        def mean(block: Tensor, nodes: Tensor) -> Tensor:  # [R, K] @ [K, B*h] -> [R, B, h]
            block = block if dtype is None else block.to(dtype)
            return (block @ nodes.reshape(nodes.shape[0], B * h)).view(block.shape[0], B, h)

        from_cells = mean(graph.from_cells, cells)  # [H + C + 4, B, h]
        to_cells = torch.einsum("bcs,sbh->cbh", contact_to_cells, sides)  # mean over touched sides
        to_sides = torch.einsum("bcs,cbh->sbh", contact_to_sides, cells)  # mean over touching cells
        m_holes = from_cells[:H] * g[0]
        m_cells = (mean(graph.cells_from_holes, holes) * g[0] + from_cells[H:H + C] * g[1]
                   + mean(graph.cells_from_sides, sides) * g[2] + to_cells * g[3])
        m_sides = from_cells[H + C:] * g[2] + to_sides * g[3]
        m = torch.cat([m_holes, m_cells, m_sides]) + y.mean(dim=0, keepdim=True) * g[4]  # [N, B, h]
        # W1 [y, m] as two matmuls into one output (no concatenated copy).
        w_y, w_m = self.mix.weight[:, :h].to(y.dtype), self.mix.weight[:, h:].to(y.dtype)
        z = torch.addmm(self.mix.bias.to(y.dtype), y.reshape(N * B, h), w_y.T)
        z = torch.addmm(z, m.reshape(N * B, h), w_m.T).view(N, B, h)
        return x + self.out(nn.functional.gelu(z))

    def infer_(self, x: Tensor, graph: Graph, contact_to_cells: Tensor, contact_to_sides: Tensor) -> Tensor:
        """``forward`` for inference without autocast, in fewer memory passes; updates ``x`` in place
        and returns it (the caller owns ``x``). The same function up to float rounding (tested): the
        messages are written into one buffer with fused multiply-adds instead of summed and
        concatenated; the global term and W1's bias enter as one row per position ``[B, h]``; the
        residual is accumulated into ``x`` by the last matmul; on the CPU in float32 the aggregation
        multiplies by the graph's sparse blocks, and in the native package (``nn.native``) it gathers by
        the graph's neighbour lists (``Graph.lists``). Every tensor is in the parameters' dtype (no
        autocast). On a CPU the network runs 1.17-1.24 times as fast at 8-256 positions
        (docs/speed.md)."""
        N, B, h = x.shape
        H, C = graph.num_holes, graph.num_cells
        y = nn.functional.layer_norm(x, (h,), self.norm.weight, self.norm.bias, self.norm.eps)  # [N, B, h]
        g = self.gates  # [T + 2, h]
        holes, cells, sides = y[:H], y[H:H + C], y[H + C:]

        # The CPU's sparse copies in eager float32 only: torch.compile cannot trace sparse tensors.
        eager = graph.sparse is not None and y.dtype == torch.float32 and not torch.compiler.is_compiling()
        sparse = graph.sparse if eager else (None, None, None)

        lists = graph.lists or (None, None, None)

        def mean(block: Tensor, nodes: Tensor, coo: Tensor | None,
                 listed: tuple[Tensor, Tensor] | None) -> Tensor:  # [R, K] @ [K, B*h] -> [R, B, h]
            if listed is not None:  # the native package's neighbour lists (``Graph.lists``): one fused loop
                index, weight = listed  # [R, D]
                return (nodes[index] * weight[:, :, None, None].to(y.dtype)).sum(1)  # [R, D, B, h] -> [R, B, h]
            flat = nodes.reshape(nodes.shape[0], B * h)
            if coo is not None:  # the CPU's sparse copy of the block (``Graph.sparse``)
                return torch.sparse.mm(coo, flat).view(block.shape[0], B, h)
            block = block if block.dtype == y.dtype else block.to(y.dtype)
            return (block @ flat).view(block.shape[0], B, h)

        m = torch.empty_like(y)  # [N, B, h]: the messages, written part by part
        from_cells = mean(graph.from_cells, cells, sparse[0], lists[0])  # [H + C + 4, B, h]
        torch.mul(from_cells[:H], g[0], out=m[:H])
        m_cells = m[H:H + C]
        torch.mul(from_cells[H:H + C], g[1], out=m_cells)
        m_cells.addcmul_(mean(graph.cells_from_holes, holes, sparse[1], lists[1]), g[0])
        m_cells.addcmul_(mean(graph.cells_from_sides, sides, sparse[2], lists[2]), g[2])
        m_cells.addcmul_(torch.bmm(contact_to_cells, sides.transpose(0, 1)).transpose(0, 1), g[3])  # [B, C, h] seen as [C, B, h]
        m_sides = m[H + C:]
        torch.mul(from_cells[H + C:], g[2], out=m_sides)
        m_sides.addcmul_(torch.bmm(contact_to_sides.transpose(1, 2), cells.transpose(0, 1)).transpose(0, 1), g[3])
        w_y, w_m = self.mix.weight[:, :h], self.mix.weight[:, h:]
        # W1 [y, m] + b, with m's global term y.mean * g[4] (the same at every node) and the bias as
        # one row per position, added to the two matmuls' sum.
        row = torch.addmm(self.mix.bias, y.mean(dim=0) * g[4], w_m.T)  # [B, h]
        z = torch.mm(y.view(N * B, h), w_y.T)  # [N*B, h]
        z.addmm_(m.view(N * B, h), w_m.T)
        z.view(N, B, h).add_(row)
        flat = x.view(N * B, h)
        flat.addmm_(nn.functional.gelu(z), self.out.weight.T)
        flat += self.out.bias
        return x


class GraphNet(nn.Module):
    """Policy logits ``[B, H + 1]``, value ``[B]`` in [-1, 1], ownership ``[B, C]`` in [-1, 1];
    all from the mover's point of view (ownership +1: the mover will own the cell).

    Runs node-major (``[N, B, h]``) so the aggregation multiplies ``[T*N, N]`` by the hidden
    states viewed as ``[N, B*h]`` without copies.
    """

    def __init__(self, config: ModelConfig, num_features: int | None = None, num_types: int = 3):
        super().__init__()
        if num_features is not None and num_features != config.num_features:
            raise ValueError(f"{config.name} reads {config.num_features} input features, not {num_features}")
        num_features = config.num_features
        self.config = config
        self.num_features = num_features
        h = config.hidden
        self.embed = nn.Linear(num_features, h)
        self.blocks = nn.ModuleList(Block(h, num_types) for _ in range(config.layers))
        self.norm = nn.LayerNorm(h)
        self.policy = nn.Linear(h, 1)
        self.swap = nn.Linear(2 * h, 1)
        self.value = nn.Sequential(nn.Linear(2 * h, h), nn.GELU(), nn.Linear(h, 1))
        self.ownership = nn.Linear(h, 1)

    @property
    def name(self) -> str:
        return self.config.name

    def forward(self, enc: Encoded, graph: Graph) -> tuple[Tensor, Tensor, Tensor]:
        H, C = graph.num_holes, graph.num_cells
        x = self.embed(enc.x.to(self.embed.weight.dtype)).transpose(0, 1).contiguous()  # [N, B, h]
        contact = enc.contact.to(x.dtype)  # [B, C, 4]
        to_cells = contact / contact.sum(2, keepdim=True).clamp(min=1)
        to_sides = contact / contact.sum(1, keepdim=True).clamp(min=1)
        # Inference without autocast takes the blocks' in-place path (x is this call's own tensor).
        lean = not torch.is_grad_enabled() and not torch.is_autocast_enabled(x.device.type)
        for _ in range(self.config.repeat):
            for block in self.blocks:
                x = block.infer_(x, graph, to_cells, to_sides) if lean else block(x, graph, to_cells, to_sides)
        x = self.norm(x)
        pooled = torch.cat([x.mean(dim=0), x.amax(dim=0)], dim=-1)  # [B, 2h]
        hole_logits = self.policy(x[:H])[..., 0].T  # [B, H]
        swap_logit = self.swap(pooled)  # [B, 1]
        logits = torch.cat([hole_logits, swap_logit], dim=1).float()  # [B, H + 1]
        value = torch.tanh(self.value(pooled)[:, 0]).float()  # [B]
        ownership = torch.tanh(self.ownership(x[H:H + C])[..., 0].T).float()  # [B, C]
        return logits, value, ownership


def with_connection_inputs(model: GraphNet) -> GraphNet:
    """A copy of a plain model (``connection=False``) that reads the connection columns too, with
    zero weights on them: it computes the plain model's outputs until training moves those weights.
    A warm start for a ``...c`` network from a trained plain one (``init``, ``distill --init``)."""
    if model.config.connection:
        raise ValueError(f"{model.config.name} reads the connection features already")
    config = replace(model.config, connection=True)
    wide = GraphNet(config).to(model.embed.weight.device)
    weights = dict(model.state_dict())
    embed = torch.zeros_like(wide.embed.weight)  # [h, F + K]
    embed[:, :model.num_features] = weights["embed.weight"]
    weights["embed.weight"] = embed
    wide.load_state_dict(weights)
    return wide.train(model.training)


def num_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())

