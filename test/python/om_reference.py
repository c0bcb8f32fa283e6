"""An independent reader of Ascend .om offline models, for tests.

Written from docs of the format (shared/formats/om.md, which cites GE's
om_file_helper.cc, ge_ir.proto and task.proto), with the standard library
only: a protobuf wire-format walker, not the generated classes or the C++
reader under test. It decodes the 256-byte header, the partition tables
(12- or 24-byte entries by GE's rule), every group, MODEL_DEF (op names
and types per graph, Const weight sizes, compressed attribute names),
TASK_INFO (task types, stream ids, kernel op_index) and the kernel stores.
"""

import struct

MAGIC = b"IMOD"
HEADER = 256
MODEL_DEF, WEIGHTS_DATA, TASK_INFO, TBE_KERNELS = 0, 1, 2, 3
CUST_AICPU_KERNELS, SO_BINS, FLOW_MODEL, FLOW_SUBMODEL = 4, 5, 6, 7
KERNEL_STORES = (TBE_KERNELS, CUST_AICPU_KERNELS, SO_BINS)
KERNEL_ITEM_MAGIC = 0x5D776EFD


def varint(buf, pos):
    shift = value = 0
    while True:
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7


def fields(buf):
    """Yields (field number, wire type, value) of one message."""
    pos = 0
    while pos < len(buf):
        key, pos = varint(buf, pos)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, pos = varint(buf, pos)
        elif wire == 1:
            value = buf[pos:pos + 8]
            pos += 8
        elif wire == 2:
            size, pos = varint(buf, pos)
            value = buf[pos:pos + size]
            pos += size
        elif wire == 5:
            value = buf[pos:pos + 4]
            pos += 4
        else:
            raise ValueError("wire type %d" % wire)
        yield number, wire, value


def first(buf, number, default=None):
    for n, _, v in fields(buf):
        if n == number:
            return v
    return default


def every(buf, number):
    return [v for n, _, v in fields(buf) if n == number]


def packed_or_plain(buf, number):
    """A repeated varint field, packed (wire 2) or not."""
    out = []
    for n, wire, v in fields(buf):
        if n != number:
            continue
        if wire == 0:
            out.append(v)
        else:
            pos = 0
            while pos < len(v):
                x, pos = varint(v, pos)
                out.append(x)
    return out


def header(data):
    if data[:4] != MAGIC:
        raise ValueError("magic %r" % data[:4])
    h = {}
    h["headsize"], h["version"] = struct.unpack_from("<II", data, 4)
    h["length"] = struct.unpack_from("<I", data, 76)[0]
    h["is_encrypt"], h["is_checksum"], h["modeltype"], h["genmode"] = \
        data[80], data[81], data[82], data[83]
    h["name"] = data[84:116].split(b"\0")[0].decode()
    v2 = h["version"] >= 0x20000000
    h["model_num"] = struct.unpack_from("<I", data, 156)[0] if v2 else 1
    h["model_length"] = struct.unpack_from("<Q", data, 184)[0] if v2 else 0
    h["is_unknow_model"] = data[193] if v2 else 0
    return h


def groups(data):
    """Every {table, data} group: a list of {type: (offset, size)}."""
    h = header(data)
    wide = h["modeltype"] == 3 or h["model_length"] != 0
    count = 1
    if h["version"] >= 0x20000000 and (h["model_num"] > 1
                                      or h["is_unknow_model"] == 1):
        count = h["model_num"]
    pos = HEADER
    out = []
    for _ in range(count):
        num = struct.unpack_from("<I", data, pos)[0]
        entries = []
        if wide:
            table_end = pos + 8 + 24 * num
            for i in range(num):
                t, _, off, size = struct.unpack_from("<IIQQ", data,
                                                     pos + 8 + 24 * i)
                entries.append((t, off, size))
        else:
            table_end = pos + 4 + 12 * num
            for i in range(num):
                entries.append(struct.unpack_from("<III", data,
                                                  pos + 4 + 12 * i))
        parts = {}
        running = 0
        for t, off, size in entries:
            assert off == running, "offset %d, expected %d" % (off, running)
            parts[t] = (table_end + off, size)
            running += size
        out.append(parts)
        pos = table_end + running
    assert pos == len(data), "groups end at %d of %d" % (pos, len(data))
    return h, out


def kernel_names(blob):
    names = []
    pos = 0
    while pos + 12 <= len(blob):
        magic, name_len, bin_len = struct.unpack_from("<III", blob, pos)
        assert magic == KERNEL_ITEM_MAGIC
        names.append(blob[pos + 12:pos + 12 + name_len].decode())
        pos += 12 + name_len + bin_len
    return names


def map_entries(buf, number):
    """map<string, AttrDef> field -> {key bytes: AttrDef bytes}."""
    out = {}
    for entry in every(buf, number):
        out[first(entry, 1, b"")] = first(entry, 2, b"")
    return out


def decode_compressed_key(key, names):
    """0x00 then base-127 digits, least significant first, each + 1."""
    index = 0
    for i, b in enumerate(key[1:]):
        index += (b - 1) * 127 ** i
    return names[index].encode()


def model_def(buf, root_names=None):
    """Graphs of a ModelDef: [{name, ops: [{name, type, id, ...}]}].
    root_names: the root model's attr_name_enum, for a submodel whose
    dictionary holds names that are themselves encoded."""
    model_attrs = map_entries(buf, 11)

    def list_s(attr):
        lst = first(model_attrs.get(attr.encode(), b""), 1)
        return [s.decode() for s in every(lst, 2)] if lst else []

    enum_names = list_s("attr_name_enum")
    graphs = []
    for g in every(buf, 7):
        ops = []
        for op in every(g, 6):
            attrs = {}
            for k, v in map_entries(op, 10).items():
                if k[:1] == b"\0":
                    k = decode_compressed_key(k, enum_names)
                    if k[:1] == b"\0" and root_names:
                        k = decode_compressed_key(k, root_names)
                attrs[k.decode()] = v
            record = {
                "name": first(op, 1, b"").decode(),
                "type": first(op, 2, b"").decode(),
                "id": first(op, 21, 0),
                "attrs": attrs,
                # TensorDescriptor field 4: the layout of each output.
                "output_layouts": [first(d, 4, b"").decode()
                                   for d in every(op, 34)],
            }
            value = attrs.get("value")
            if value is not None and first(value, 12) is not None:
                desc = first(first(value, 12), 1, b"")
                record["weight_size"] = first(desc, 11, 0)
                record["data_offset"] = first(desc, 18, 0)
            ops.append(record)
        graphs.append({"name": first(g, 1, b"").decode(), "ops": ops})
    return {"name": first(buf, 1, b"").decode(), "graphs": graphs,
            "task_index_op_name": list_s("task_index_op_name"),
            "attr_name_enum": enum_names}


def task_info(buf):
    """Tasks of a ModelTaskDef: [{type, stream_id, op_index, kernel}]."""
    tasks = []
    for t in every(buf, 10):
        task = {"type": first(t, 2, 0), "stream_id": first(t, 10, 0)}
        kernel = first(t, 20)
        if kernel is not None:
            ctx = first(kernel, 1, b"")
            task["op_index"] = first(ctx, 4, 0)
            task["kernel_name"] = first(kernel, 17, b"").decode()
            task["stub_func"] = first(kernel, 10, b"").decode()
            task["block_dim"] = first(kernel, 11, 0)
        kernel_ex = first(t, 21)
        if kernel_ex is not None:
            task["op_index"] = first(kernel_ex, 4, 0)
        tasks.append(task)
    return tasks


def read(data):
    """The whole file: header, groups, and per group its models."""
    h, gs = groups(data)
    models = []
    root_names = None
    for parts in gs:
        m = {"partitions": sorted(parts)}
        if MODEL_DEF in parts:
            off, size = parts[MODEL_DEF]
            m["model"] = model_def(data[off:off + size], root_names)
            if root_names is None:
                root_names = m["model"]["attr_name_enum"]
        if TASK_INFO in parts:
            off, size = parts[TASK_INFO]
            m["tasks"] = task_info(data[off:off + size])
        if WEIGHTS_DATA in parts:
            m["weights_bytes"] = parts[WEIGHTS_DATA][1]
        m["kernels"] = []
        for t in KERNEL_STORES:
            if t in parts:
                off, size = parts[t]
                m["kernels"] += kernel_names(data[off:off + size])
        models.append(m)
    return h, models


# ---------------------------------------------------------------- writing
# A minimal protobuf and .om writer for hand-built test files.

def enc_varint(value):
    out = bytearray()
    while True:
        b = value & 0x7F
        value >>= 7
        if value:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def enc_bytes(number, payload):
    if isinstance(payload, str):
        payload = payload.encode()
    return enc_varint(number << 3 | 2) + enc_varint(len(payload)) + payload


def enc_int(number, value):
    return enc_varint(number << 3) + enc_varint(value)


def attr_s(value):
    return enc_bytes(2, value)


def attr_list_s(values):
    return enc_bytes(1, b"".join(enc_bytes(2, v) for v in values))


def map_entry(number, key, value):
    return enc_bytes(number, enc_bytes(1, key) + enc_bytes(2, value))


def op_def(name, type_, op_id, inputs=(), attrs=None, layout="NC1HWC0"):
    out = enc_bytes(1, name) + enc_bytes(2, type_)
    for i in inputs:
        out += enc_bytes(5, i)
    for k, v in (attrs or {}).items():
        out += map_entry(10, k, v)
    if op_id:
        out += enc_int(21, op_id)
    # One output desc: float16 (dtype 2), the given layout.
    out += enc_bytes(34, enc_int(2, 2) + enc_bytes(4, layout))
    return out


def model_def_bytes(name, graphs, attrs=None):
    """graphs: [(graph name, [op_def bytes])]."""
    out = enc_bytes(1, name)
    for gname, ops in graphs:
        out += enc_bytes(7, enc_bytes(1, gname) +
                         b"".join(enc_bytes(6, o) for o in ops))
    for k, v in (attrs or {}).items():
        out += map_entry(11, k, v)
    return out


def kernel_task(op_index, kernel_name, stream=0, block_dim=1):
    kernel = (enc_bytes(1, enc_int(4, op_index)) + enc_int(11, block_dim) +
              enc_bytes(17, kernel_name))
    return enc_bytes(10, enc_int(10, stream) + enc_bytes(20, kernel))


def om_file(parts, version=0x20000000, wide=False, encrypt=0, model_type=0):
    """One group; parts: [(type, bytes)]. wide sets model_length; a flow
    model (model_type 3) has wide entries without it."""
    entries_wide = wide or model_type == 3
    table = struct.pack("<I", len(parts)) + (b"\0" * 4 if entries_wide else b"")
    data = b""
    for t, payload in parts:
        if entries_wide:
            table += struct.pack("<IIQQ", t, 0, len(data), len(payload))
        else:
            table += struct.pack("<III", t, len(data), len(payload))
        data += payload
    body = table + data
    h = bytearray(HEADER)
    h[0:4] = MAGIC
    struct.pack_into("<II", h, 4, HEADER, version)
    h[80] = encrypt
    h[82] = model_type
    h[84:88] = b"test"
    if wide:
        struct.pack_into("<Q", h, 184, len(body))
    else:
        struct.pack_into("<I", h, 76, len(body))
    if version >= 0x20000000:
        struct.pack_into("<I", h, 156, 1)
    return bytes(h) + body
