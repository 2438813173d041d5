# The BPCells R package on the matrix bpcells_bench wrote, for its peer column.
# Usage: Rscript --vanilla peer_bpcells.R OURS_DIR OUT_DIR RUNS WRITE_RUNS
# Prints "name value" lines: version, the best of RUNS (writes: WRITE_RUNS)
# wall-clock seconds of
#   write      write_matrix_dir(compress = TRUE) of the matrix held in memory
#              (uint32, unpacked: the encoding and the files are what is timed)
#   colSums    colSums of open_matrix_dir(OUT_DIR), the directory it wrote
#   colSumsOurs  colSums of open_matrix_dir(OURS_DIR), written before R started
#   dgCMatrix  as(open_matrix_dir(OURS_DIR), "dgCMatrix")
# and "total", the sum of the column sums.
suppressPackageStartupMessages({
  library(BPCells)
  library(Matrix)
})
args <- commandArgs(trailingOnly = TRUE)
ours <- args[1]
out <- args[2]
runs <- as.integer(args[3])
write_runs <- as.integer(args[4])

best <- function(f, n = runs) {
  t <- Inf
  for (i in seq_len(n)) {
    t0 <- Sys.time()
    f()
    t <- min(t, as.numeric(Sys.time() - t0, units = "secs"))
  }
  t
}

m <- open_matrix_dir(ours)
# First, away from its own writes' page-cache write-back.
t_sums_ours <- best(function() colSums(m))
dg <- NULL
t_dgc <- best(function() dg <<- as(m, "dgCMatrix"))
# Loaded into memory untimed, so that the write times encoding and files only.
mem <- write_matrix_memory(m, compress = FALSE)
t_write <- best(function() write_matrix_dir(mem, out, compress = TRUE, overwrite = TRUE), write_runs)
written <- open_matrix_dir(out)
sums <- NULL
t_sums <- best(function() sums <<- colSums(written))
stopifnot(abs(sum(sums) - sum(dg@x)) < 0.5)

cat("version", format(packageVersion("BPCells")), "\n")
cat("write", sprintf("%.6f", t_write), "\n")
cat("colSums", sprintf("%.6f", t_sums), "\n")
cat("colSumsOurs", sprintf("%.6f", t_sums_ours), "\n")
cat("dgCMatrix", sprintf("%.6f", t_dgc), "\n")
cat("total", sprintf("%.0f", sum(sums)), "\n")
