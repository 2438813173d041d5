// zarrita (the JavaScript Zarr library, npm `zarrita` 0.7.5 with
// `@zarrita/storage`), the tests' Zarr v3 peer:
//
//   node zarrita_peer.mjs read STORE OUT NODE...   each array whole into OUT/<node>.bin (C order,
//                                                  little endian) and one JSON line per node
//   node zarrita_peer.mjs write STORE OUT          writes the arrays below (unsharded: zarrita 0.7.5
//                                                  cannot write shards) and their values into OUT
//   node zarrita_peer.mjs read-strings STORE NODE... each string array's values, one JSON line per node
//
// The packages live where scripts/install-deps put them: $STOWAGE_NODE_MODULES
// (default /usr/local/lib/stowage-node/node_modules).
import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";

const modules = process.env.STOWAGE_NODE_MODULES || "/usr/local/lib/stowage-node/node_modules";
async function load(pkg, entry) {
  const manifest = JSON.parse(fs.readFileSync(path.join(modules, pkg, "package.json"), "utf8"));
  const exp = manifest.exports[entry];
  const file = typeof exp === "string" ? exp : exp.import;
  return import(pathToFileURL(path.join(modules, pkg, file)).href);
}
const zarr = await load("zarrita", ".");
const { default: FileSystemStore } = await load("@zarrita/storage", "./fs");

// zarrita hands an F-order array's values back in F order (its strides say
// so): copied into C order, element by element.
function cOrder(chunk) {
  const { data, shape, stride } = chunk;
  const n = shape.reduce((a, b) => a * b, 1);
  const out = new data.constructor(n);
  const at = new Array(shape.length).fill(0);
  for (let i = 0; i < n; i++) {
    let src = 0;
    for (let d = 0; d < shape.length; d++) src += at[d] * stride[d];
    if (data.get) out.set(i, data.get(src));  // BoolArray
    else out[i] = data[src];
    for (let d = shape.length - 1; d >= 0 && ++at[d] === shape[d]; d--) at[d] = 0;
  }
  return out;
}

function bytesOf(data) {
  // BoolArray keeps its bytes in a Uint8Array; typed arrays are little endian here.
  const view = data._data ?? data;
  return Buffer.from(view.buffer, view.byteOffset, view.byteLength);
}

async function read(store, out, nodes) {
  const root = zarr.root(new FileSystemStore(store));
  for (const node of nodes) {
    const arr = await zarr.open.v3(root.resolve(node), { kind: "array" });
    const chunk = await zarr.get(arr);
    fs.writeFileSync(path.join(out, node.replaceAll("/", "__") + ".bin"), bytesOf(cOrder(chunk)));
    console.log(JSON.stringify({ node, dtype: arr.dtype, shape: arr.shape, chunks: arr.chunks }));
  }
}

const TYPED = { uint8: Uint8Array, int16: Int16Array, uint16: Uint16Array, int32: Int32Array, float32: Float32Array,
                float64: Float64Array, int64: BigInt64Array, uint32: Uint32Array };

async function write(store, out) {
  const root = zarr.root(new FileSystemStore(store));
  await zarr.create(root, { attributes: { writer: "zarrita" } });
  const cases = [
    { name: "u16_raw", dtype: "uint16", codecs: [{ name: "bytes", configuration: { endian: "little" } }] },
    // (zarrita 0.7.5 cannot encode gzip: it reads it only.)
    { name: "i32_blosc_big", dtype: "int32", codecs: [{ name: "bytes", configuration: { endian: "big" } },
                                                       { name: "blosc", configuration: { cname: "zstd", clevel: 3,
                                                         shuffle: "shuffle", typesize: 4, blocksize: 0 } }] },
    // (nor crc32c: that one it only checks.)
    { name: "f32_zstd", dtype: "float32", codecs: [{ name: "bytes", configuration: { endian: "little" } },
                                                    { name: "zstd", configuration: { level: 2, checksum: false } }] },
    { name: "f64_transpose", dtype: "float64", codecs: [{ name: "transpose", configuration: { order: [2, 1, 0] } },
                                                         { name: "bytes", configuration: { endian: "little" } }] },
    { name: "i16_transpose_120", dtype: "int16", codecs: [{ name: "transpose", configuration: { order: [1, 2, 0] } },
                                                            { name: "bytes", configuration: { endian: "little" } },
                                                            { name: "zstd", configuration: { level: 1, checksum: false } }] },
    { name: "u8_v2keys", dtype: "uint8", keys: "v2", codecs: [{ name: "bytes", configuration: {} }] },
  ];
  const shape = [7, 9, 11], n = 7 * 9 * 11;
  for (const c of cases) {
    const T = TYPED[c.dtype];
    const values = new T(n);
    for (let i = 0; i < n; i++) {
      const v = (i * 37) % 251;
      values[i] = T === BigInt64Array ? BigInt(v) : c.dtype.startsWith("float") ? v / 4 - 10 : v;
    }
    const options = { shape, chunkShape: [4, 4, 5], dtype: c.dtype, codecs: c.codecs, fillValue: 3,
                      dimensionNames: ["z", "y", "x"] };
    let arr = await zarr.create(root.resolve(c.name), options);
    if (c.keys === "v2") {
      // zarrita writes "default" keys; rewrite the metadata to the v2 encoding before any chunk.
      const file = path.join(store, c.name, "zarr.json");
      const meta = JSON.parse(fs.readFileSync(file, "utf8"));
      meta.chunk_key_encoding = { name: "v2", configuration: { separator: "." } };
      fs.writeFileSync(file, JSON.stringify(meta));
      arr = await zarr.open.v3(root.resolve(c.name), { kind: "array" });
    }
    await zarr.set(arr, null, { data: values, shape, stride: [99, 11, 1] });
    fs.writeFileSync(path.join(out, c.name + ".bin"), bytesOf(values));
    console.log(JSON.stringify({ node: c.name, dtype: c.dtype, shape }));
  }
}

// String arrays (data type "string", vlen-utf8): one JSON line per node
// with its values in C order (zarrita decodes vlen-utf8 but cannot encode it).
async function readStrings(store, nodes) {
  const root = zarr.root(new FileSystemStore(store));
  for (const node of nodes) {
    const arr = await zarr.open.v3(root.resolve(node), { kind: "array" });
    const chunk = await zarr.get(arr);
    console.log(JSON.stringify({ node, dtype: arr.dtype, shape: arr.shape, values: Array.from(cOrder(chunk)) }));
  }
}

const [mode, store, out, ...nodes] = process.argv.slice(2);
if (mode === "read") await read(store, out, nodes);
else if (mode === "write") await write(store, out);
else if (mode === "read-strings") await readStrings(store, [out, ...nodes]);
else throw new Error("usage: zarrita_peer.mjs read|write|read-strings STORE OUT|NODE [NODE...]");
