"""Single-cell matrices: Sparse[rows, cols], to_dask of a Sparse matrix and
to_anndata, on the BPCells and Daf matrices written by the real
implementations (tests/fixtures/bpcells, tests/fixtures/daf), with their
expected values, scipy's indexing and anndata (Debian's 0.8) on the other
side of each comparison."""

import json
import os

import anndata
import dask
import numpy as np
import pandas as pd
import pytest
import scipy.sparse
from conftest import fixture, needs

import stowage

pytestmark = needs("bpcells", "daf")


def bpcells_expected(name):
    """(dense values, row names, column names) as BPCells' own reader gave them."""
    meta = json.loads(fixture("bpcells", name + ".expected.json").read_text())
    values = np.fromfile(fixture("bpcells", name + ".expected.bin"), meta["data"]["dtype"]).reshape(meta["shape"])
    return values, meta["row_names"], meta["col_names"]


def daf_expected(name):
    return json.loads(fixture("daf", name + ".expected.json").read_text())


def daf_bin(name, entry):
    return np.fromfile(fixture("daf", entry["bin"]), entry["bin_dtype"]).reshape(entry.get("shape", [-1]))


def same_sparse(got, want):
    assert scipy.sparse.issparse(got)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_array_equal(got.toarray(), want.toarray() if scipy.sparse.issparse(want) else want)


# ---- Sparse[rows, cols] ------------------------------------------------------------------

KEYS = [
    (slice(None), slice(None)),
    (1, slice(None)),
    (slice(1, 4), 2),
    ([2, 0, 2], slice(None, None, -1)),
    (slice(None), slice(1, None, 2)),
    (-1, -1),
    (np.array([], np.int64), slice(None)),
    (slice(None, None, 2), [0, -1]),
]


@pytest.mark.parametrize("name", ["uint_packed_col_names", "uint_packed_row_names", "double_unpacked_row",
                                  "uint_packed_col_multichunk", "float_packed_col_names"])
def test_sparse_getitem_is_scipys_selection(name):
    """Every kind of index, each axis, on CSC and CSR matrices written by
    BPCells: the values BPCells' reader gave, selected by scipy (rows, then
    columns: orthogonal), in the storage's layout; two ints give the value."""
    m = stowage.open(fixture("bpcells", name))[""]
    values, _, _ = bpcells_expected(name)
    peer = scipy.sparse.csr_matrix(values)
    rng = np.random.default_rng(7)
    masks = (rng.random(m.shape[0]) < 0.5, rng.random(m.shape[1]) < 0.5)
    picks = (rng.integers(-m.shape[0], m.shape[0], 12), rng.integers(0, m.shape[1], 5))
    for rows, cols in KEYS + [masks, picks, (masks[0], slice(None))]:
        got = m[rows, cols]
        if isinstance(rows, int) and isinstance(cols, int):
            assert got == peer[rows, cols] and got.dtype == values.dtype
            continue
        assert got.format == m.format
        same_sparse(got, peer[rows][:, cols])
    same_sparse(m[1:3], peer[1:3])  # one index: every column
    same_sparse(m[..., 0], peer[:, [0]])


def test_sparse_getitem_on_daf_matrices():
    """A Daf sparse matrix written by DataAxesFormats.jl (both layouts of
    the relayout pair), selected by a mask and a list."""
    expected = daf_expected("julia_v10_small")["matrices"]
    store = stowage.open(fixture("daf", "julia_v10_small"))
    for rows, cols in (("cell", "gene"), ("gene", "cell")):
        m = store[f"matrices/{rows}/{cols}/sparse_m"]
        peer = scipy.sparse.csr_matrix(daf_bin("julia_v10_small", expected[rows][cols]["sparse_m"]))
        mask = np.arange(m.shape[0]) % 2 == 1
        same_sparse(m[mask, [1, 0]], peer[mask][:, [1, 0]])


def test_sparse_getitem_reads_only_the_selected_majors(tmp_path):
    """Rows of a CSR matrix (columns of a CSC one) are read in runs of the
    ones selected, neighbours within a gap merged: a few rows of 5000 read
    a few rows, not the matrix. The reads are those the core is asked for."""
    x = scipy.sparse.random(5000, 40, density=0.05, format="csr", dtype=np.float32, random_state=3)
    with stowage.open(tmp_path / "m.bpcells", "w", format="bpcells") as s:
        s.write_sparse("", x)
    m = stowage.open(tmp_path / "m.bpcells")[""]
    assert m.format == "csr"
    reads = []
    core = m._core

    class Spy:
        def read(self, begin, end):
            reads.append((begin, end))
            return core.read(begin, end)

    m._core = Spy()
    same_sparse(m[[4000, 10, 12, 4000]], x[[4000, 10, 12, 4000]])
    assert sorted(reads) == [(10, 13), (4000, 4001)]
    reads.clear()
    same_sparse(m[100:110, 5:9], x[100:110, 5:9])
    assert reads == [(100, 110)]
    reads.clear()
    same_sparse(m[7], x[[7]])
    assert reads == [(7, 8)]


def test_sparse_getitem_refuses_bad_indices():
    m = stowage.open(fixture("bpcells", "uint_packed_col_names"))[""]  # 6 x 5
    with pytest.raises(IndexError, match="row 6 is out of range for 6 rows"):
        m[6]
    with pytest.raises(IndexError, match="column -6 is out of range"):
        m[:, [0, -6]]
    with pytest.raises(IndexError, match="mask must have 5 elements"):
        m[:, np.ones(4, bool)]
    with pytest.raises(IndexError, match="too many indices"):
        m[0, 0, 0]
    with pytest.raises(IndexError, match="1-d int array"):
        m[[0.5]]


# ---- to_dask ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["uint_packed_col_multichunk", "uint_packed_row_names"])
def test_to_dask_of_sparse_has_scipy_blocks_along_the_major_axis(name):
    m = stowage.open(fixture("bpcells", name))[""]
    values, _, _ = bpcells_expected(name)
    x = stowage.to_dask(m, chunks=2)
    kind = scipy.sparse.csr_matrix if m.format == "csr" else scipy.sparse.csc_matrix
    assert type(x._meta) is kind and x.dtype == values.dtype
    major = 0 if m.format == "csr" else 1
    assert x.chunks[major] == tuple(min(2, m.majors - i) for i in range(0, m.majors, 2))
    assert x.chunks[1 - major] == (m.shape[1 - major],)  # whole minors: one block across
    for i, block in enumerate(x.to_delayed().ravel()):
        got = block.compute()
        assert type(got) is kind
        window = (slice(2 * i, 2 * i + 2), slice(None)) if major == 0 else (slice(None), slice(2 * i, 2 * i + 2))
        np.testing.assert_array_equal(got.toarray(), values[window])
    np.testing.assert_array_equal(x.compute().toarray(), values)
    np.testing.assert_array_equal(x[1:4, 1:3].compute().toarray(), values[1:4, 1:3])
    dense = x.map_blocks(lambda b: b.toarray(), meta=np.empty((0, 0), x.dtype))
    np.testing.assert_array_equal(dense.compute(scheduler="threads"), values)


def test_to_dask_of_sparse_on_a_cluster_of_processes(cluster, tmp_path):
    """The blocks are read in two worker processes (the matrix pickles by
    path) and come back as scipy.sparse, equal to the matrix written."""
    x = scipy.sparse.random(3000, 50, density=0.05, format="csc", dtype=np.float64, random_state=5)
    with stowage.open(tmp_path / "m.bpcells", "w", format="bpcells") as s:
        s.write_sparse("", x)
    d = stowage.to_dask(stowage.open(tmp_path / "m.bpcells")[""], chunks=7)
    assert d.numblocks == (1, 8)
    same_sparse(d.compute(), x)  # the cluster's client is the default scheduler here
    readers = d.map_blocks(lambda b: np.array([[os.getpid() if scipy.sparse.isspmatrix_csc(b) else -1]]),
                           chunks=(1, 1), meta=np.empty((0, 0), int)).compute()
    assert set(readers.ravel()) <= set(cluster.run(os.getpid).values()) and os.getpid() not in readers


def test_to_dask_of_sparse_default_blocks_and_bad_chunks():
    m = stowage.open(fixture("bpcells", "uint_packed_col_multichunk"))[""]
    assert stowage.to_dask(m).chunks == ((300,), (3,))  # 333 values: one block
    assert stowage.to_dask(m, chunks=(-1, 2)).chunks == stowage.to_dask(m, chunks=(300, 2)).chunks == ((300,), (2, 1))
    with pytest.raises(stowage.InvalidArgumentError, match="CSC matrix cuts blocks of whole columns"):
        stowage.to_dask(m, chunks=(7, 2))


# ---- to_anndata ---------------------------------------------------------------------------


def peer_anndata(x, obs_names, var_names):
    """What a user builds from scipy directly, as anndata documents it."""
    return anndata.AnnData(x, obs=pd.DataFrame(index=obs_names), var=pd.DataFrame(index=var_names), dtype=x.dtype)


@pytest.mark.parametrize("name", ["uint_packed_col_names", "uint_packed_row_names", "double_packed_col_names",
                                  "float_packed_col_names", "legacy_crlf_packed_double"])
def test_to_anndata_of_bpcells_is_cells_by_genes(name):
    """BPCells holds genes x cells (R's layout): obs are its columns, with
    their names; X keeps the dtype and equals BPCells' values transposed."""
    values, row_names, col_names = bpcells_expected(name)
    adata = stowage.to_anndata(stowage.open(fixture("bpcells", name)))
    peer = peer_anndata(scipy.sparse.csr_matrix(values.T), col_names, row_names)
    assert adata.shape == peer.shape == values.T.shape
    assert list(adata.obs_names) == list(peer.obs_names) and list(adata.var_names) == list(peer.var_names)
    same_sparse(adata.X, peer.X)
    storage = stowage.open(fixture("bpcells", name))[""].format
    assert adata.X.format == ("csr" if storage == "csc" else "csc")  # the transpose, no copy
    # anndata's own subsetting by names and masks agrees
    cells, genes = list(peer.obs_names[::2]), peer.var_names[1:]
    same_sparse(adata[cells, genes].X, peer[cells, genes].X)


def test_to_anndata_takes_names_and_orientation():
    store = stowage.open(fixture("bpcells", "uint_packed_col_bigvals"))  # no names
    values, _, _ = bpcells_expected("uint_packed_col_bigvals")
    adata = stowage.to_anndata(store)
    assert list(adata.obs_names) == [str(i) for i in range(values.shape[1])]  # anndata's default
    named = stowage.to_anndata(store[""], obs_names=list("abcd"), var_names=list("vwxyz"))
    assert list(named.obs_names) == list("abcd") and list(named.var_names) == list("vwxyz")
    as_stored = stowage.to_anndata(store, obs=0)
    same_sparse(as_stored.X, scipy.sparse.csc_matrix(values))
    same_sparse(stowage.to_anndata(store, obs="cols").X, scipy.sparse.csr_matrix(values.T))
    with pytest.raises(stowage.InvalidArgumentError, match="obs_names has 3 names for 4 entries"):
        stowage.to_anndata(store, obs_names=list("abc"))
    with pytest.raises(stowage.InvalidArgumentError, match="no dimension 'cell'"):
        stowage.to_anndata(store, obs="cell")
    with pytest.raises(stowage.InvalidArgumentError, match="uint_packed_col_bigvals: / is a matrix; layer="):
        stowage.to_anndata(store, layer="UMIs")
    with pytest.raises(stowage.InvalidArgumentError, match="not Strings"):
        stowage.to_anndata(stowage.open(fixture("daf", "julia_v10_small"))["axes/cell"])


def test_to_anndata_of_daf_takes_the_axes_and_vectors():
    """DataAxesFormats.jl's example: 856 cells x 683 genes of dense UInt8
    UMIs; obs and var are the cell and gene axes, their vectors the columns."""
    expected = daf_expected("julia_v10_example_cells")
    adata = stowage.to_anndata(stowage.open(fixture("daf", "julia_v10_example_cells")))
    umis = daf_bin("julia_v10_example_cells", expected["matrices"]["cell"]["gene"]["UMIs"])
    obs = pd.DataFrame({k: v["values"] for k, v in expected["vectors"]["cell"].items()},
                       index=expected["axes"]["cell"]["entries"])
    var = pd.DataFrame({k: daf_bin("julia_v10_example_cells", v).astype(bool) for k, v in
                        expected["vectors"]["gene"].items()}, index=expected["axes"]["gene"]["entries"])
    peer = anndata.AnnData(umis, obs=obs, var=var, dtype=umis.dtype)
    assert adata.X.dtype == np.uint8 and adata.shape == (856, 683)
    np.testing.assert_array_equal(adata.X, peer.X)
    pd.testing.assert_frame_equal(adata.obs, peer.obs, check_dtype=False)
    pd.testing.assert_frame_equal(adata.var, peer.var)
    young = peer.obs["donor"] == peer.obs["donor"].iloc[0]
    np.testing.assert_array_equal(adata[young.values].X, peer[young.values].X)


def test_to_anndata_of_daf_keeps_every_vector_type():
    """obs columns of every Daf element type (dense and sparse vectors, a
    sparse String one) equal the values the writer stored, in their dtype;
    a Bool sparse matrix is a bool X."""
    expected = daf_expected("gen_v11_types")
    adata = stowage.to_anndata(stowage.open(fixture("daf", "gen_v11_types")), layer="mask")
    vectors = expected["vectors"]["cell"]
    assert sorted(adata.obs.columns) == sorted(vectors)
    for name, entry in vectors.items():
        if entry["eltype"] == "String":
            assert list(adata.obs[name]) == entry["values"], name
        else:
            want = daf_bin("gen_v11_types", entry).astype(bool if entry["eltype"] == "Bool" else entry["bin_dtype"])
            assert adata.obs[name].dtype == want.dtype, name
            np.testing.assert_array_equal(adata.obs[name].to_numpy(), want, err_msg=name)
    assert list(adata.obs_names) == expected["axes"]["cell"]["entries"] and adata.X.dtype == bool
    same_sparse(adata.X, daf_bin("gen_v11_types", expected["matrices"]["cell"]["gene"]["mask"]).astype(bool))


def test_to_anndata_of_daf_layers():
    """layer= picks a Daf matrix by name (the copy whose majors are the cells:
    gene/cell CSC -> CSR X) or by path; several candidates are refused by name."""
    expected = daf_expected("julia_v10_small")["matrices"]
    store = stowage.open(fixture("daf", "julia_v10_small"))
    peer = daf_bin("julia_v10_small", expected["cell"]["gene"]["sparse_m"])
    adata = stowage.to_anndata(store, layer="sparse_m")
    assert adata.X.format == "csr" and list(adata.obs_names) == list("ABCD") and list(adata.var_names) == ["X", "Y"]
    same_sparse(adata.X, peer)
    by_path = stowage.to_anndata(store, layer="matrices/cell/gene/sparse_m")
    assert by_path.X.format == "csc"
    same_sparse(by_path.X, peer)
    np.testing.assert_array_equal(stowage.to_anndata(store, layer="dense_m").X,
                                  daf_bin("julia_v10_small", expected["cell"]["gene"]["dense_m"]))
    with pytest.raises(stowage.InvalidArgumentError, match="give layer= one of dense_m, mask, sparse_m"):
        stowage.to_anndata(store)
    with pytest.raises(stowage.NodeNotFoundError, match="no matrix 'UMIs' over the 'cell' axis"):
        stowage.to_anndata(store, layer="UMIs")
    genes = stowage.to_anndata(store, layer="sparse_m", obs="gene")  # genes as the observations
    same_sparse(genes.X, peer.T)


def test_to_anndata_lazy_has_a_dask_x():
    """lazy=True: X is a dask array of scipy.sparse blocks of whole cells,
    equal to the eager X when computed (anndata 0.8 keeps it as assigned)."""
    store = stowage.open(fixture("bpcells", "uint_packed_col_multichunk"))
    values, _, _ = bpcells_expected("uint_packed_col_multichunk")
    adata = stowage.to_anndata(store, lazy=True)
    assert isinstance(adata.X, dask.array.Array) and adata.shape == (3, 300)
    assert type(adata.X._meta) is scipy.sparse.csr_matrix
    same_sparse(adata.X.compute(), scipy.sparse.csr_matrix(values.T))


# ---- AnnData -> BPCells / Daf -> AnnData, and a scanpy-style session -----------------------


def counts_anndata():
    rng = np.random.default_rng(11)
    x = scipy.sparse.random(400, 120, density=0.08, format="csr", dtype=np.float32, random_state=rng)
    x.data = np.floor(x.data * 20) + 1
    cells = [f"AAAC{i:04d}-1" for i in range(400)]
    genes = [f"GENE{i}" for i in range(120)]
    return peer_anndata(x, cells, genes)


def test_anndata_round_trip_through_bpcells_and_daf(tmp_path):
    """An AnnData written as BPCells does it (genes x cells, CSC) and as a Daf
    gene/cell matrix reads back equal: X, its dtype and the names."""
    adata = counts_anndata()
    genes, cells = list(adata.var_names), list(adata.obs_names)
    with stowage.open(tmp_path / "counts.bpcells", "w", format="bpcells") as s:
        s.write_sparse("", adata.X.T.tocsc(), dims=[("genes", genes), ("cells", cells)])
    with stowage.open(tmp_path / "counts.daf", "w", format="daf") as s:
        s.write_strings("axes/cell", cells)
        s.write_strings("axes/gene", genes)
        s.write_sparse("matrices/gene/cell/UMIs", adata.X.T.tocsc())
    for path in ("counts.bpcells", "counts.daf"):
        back = stowage.to_anndata(stowage.open(tmp_path / path))
        assert back.X.format == "csr" and back.X.dtype == np.float32
        assert list(back.obs_names) == cells and list(back.var_names) == genes
        same_sparse(back.X, adata.X)


def test_write_anndata_and_back(tmp_path):
    """write_anndata then to_anndata (from the path): BPCells keeps X and the
    names; Daf also the obs/var columns (numbers, bools, strings, categories)
    and the layers. The BPCells directory is genes x cells, as BPCells' R
    reader would see it."""
    adata = counts_anndata()
    adata.obs["n_counts"] = np.asarray(adata.X.sum(axis=1)).ravel()
    adata.obs["donor"] = pd.Categorical(np.where(np.arange(400) % 3 == 0, "d1", "d2"))
    adata.var["is_mito"] = np.arange(120) < 5
    adata.var["symbol"] = [f"S{i}" for i in range(120)]
    adata.layers["doubled"] = (adata.X * 2).tocsr()
    written = stowage.write_anndata(adata, tmp_path / "c.bpcells")
    m = written[""]
    assert m.shape == (120, 400) and m.format == "csc" and m.dims[1][1] == list(adata.obs_names)
    back = stowage.to_anndata(tmp_path / "c.bpcells")
    same_sparse(back.X, adata.X)
    assert list(back.obs_names) == list(adata.obs_names) and list(back.var_names) == list(adata.var_names)
    stowage.write_anndata(adata, tmp_path / "c.daf", "daf")
    back = stowage.to_anndata(str(tmp_path / "c.daf"), layer="UMIs")
    same_sparse(back.X, adata.X)
    same_sparse(stowage.to_anndata(tmp_path / "c.daf", layer="doubled").X, adata.layers["doubled"])
    np.testing.assert_array_equal(back.obs["n_counts"], adata.obs["n_counts"])
    assert back.obs["n_counts"].dtype == np.float32
    assert list(back.obs["donor"]) == list(adata.obs["donor"].astype(str))
    assert back.var["is_mito"].dtype == bool and list(back.var["is_mito"]) == list(adata.var["is_mito"])
    assert list(back.var["symbol"]) == list(adata.var["symbol"])
    with pytest.raises(stowage.InvalidArgumentError, match="writes bpcells or daf, not n5"):
        stowage.write_anndata(adata, tmp_path / "c.n5")


def normalize_total(x, target=1e4):
    """scanpy.pp.normalize_total's arithmetic: each cell scaled to ``target`` counts."""
    sums = np.asarray(x.sum(axis=1)).ravel()
    return scipy.sparse.diags(target / sums) @ x


def highly_expressed(x, var_names, n=10):
    """scanpy.pl.highest_expr_genes' ranking: mean fraction of each cell's counts."""
    fractions = normalize_total(x, 1.0)
    means = np.asarray(fractions.mean(axis=0)).ravel()
    return list(np.asarray(var_names)[np.argsort(-means, kind="stable")[:n]])


def test_scanpy_style_session_on_bpcells(tmp_path):
    """The first steps of a scanpy tutorial with numpy/scipy (scanpy is not
    in Debian): filter, normalize, log1p, highest-expressed genes; the same
    values from the stowage-read AnnData as from the one built from scipy."""
    peer = counts_anndata()
    with stowage.open(tmp_path / "counts.bpcells", "w", format="bpcells") as s:
        s.write_sparse("", peer.X.T.tocsc(), dims=[("genes", list(peer.var_names)), ("cells", list(peer.obs_names))])
    results = []
    for adata in (stowage.to_anndata(stowage.open(tmp_path / "counts.bpcells")), peer):
        adata.obs["n_counts"] = np.asarray(adata.X.sum(axis=1)).ravel()
        adata.var["n_cells"] = np.asarray((adata.X > 0).sum(axis=0)).ravel()
        adata = adata[adata.obs["n_counts"] > 20, adata.var["n_cells"] >= 3].copy()
        adata.layers["counts"] = adata.X.copy()
        adata.X = normalize_total(adata.X).tocsr()
        adata.X.data = np.log1p(adata.X.data)  # scanpy.pp.log1p on sparse X
        results.append((adata, highly_expressed(adata.layers["counts"], adata.var_names)))
    (ours, ours_top), (theirs, theirs_top) = results
    assert ours.shape == theirs.shape and ours.n_obs < 400
    assert list(ours.obs_names) == list(theirs.obs_names)
    np.testing.assert_array_equal(ours.obs["n_counts"], theirs.obs["n_counts"])
    np.testing.assert_allclose(ours.X.toarray(), theirs.X.toarray(), rtol=0, atol=0)
    assert ours_top == theirs_top and len(ours_top) == 10
