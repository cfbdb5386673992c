# Models: train each (dataset, model) once and write the global rank of every test user's held-out
# item under both candidate protocols (unseen.parquet, all.parquet) plus train.json.
# The ranks are committed results: a model is retrained when its ranks are missing, when its
# hyperparameters in the config change, or when asked (`make retrain`), but not because a file
# of the package is newer than its ranks (its inputs are `ancient`). Its dataset is checked as it
# is loaded; rule verify_data is no input of it, since Snakemake reruns every job whose input
# another job of the run writes, ancient or not, and would retrain every model of a fresh clone.


wildcard_constraints:
    dataset="[^/]+",
    model="[^/]+",


rule train_and_rank:
    input:
        [ancient(path) for path in RANKS_CODE],
    output:
        unseen=ranks_file("{dataset}", "{model}", "unseen"),
        all=ranks_file("{dataset}", "{model}", "all"),
        info=train_info("{dataset}", "{model}"),
    log:
        "results/logs/train/{dataset}/{model}.log",
    benchmark:
        "results/logs/train/{dataset}/{model}.benchmark.tsv",
    params:
        options=lambda wildcards: set_options(wildcards.dataset, wildcards.model),
        seed=config["seed"],
        out_dir=lambda wildcards, output: str(Path(output.info).parent),
    threads: 2
    shell:
        BLAS_THREADS
        + "itemsampling train --dataset {wildcards.dataset} --model {wildcards.model} "
        "{params.options} --seed {params.seed} --out-dir {params.out_dir} > {log} 2>&1"


# Popularity profiles: per test user, the unseen candidates of each popularity class that precede
# the held-out item and all of them (itemsampling.popularity_profiles), what a popularity sampler
# needs beyond R_u. `itemsampling profile` refits the model as `itemsampling train` does and
# refuses to write when the refit's unseen ranks differ from the committed ones; `itemsampling
# train` writes the profile too. Committed results, like the ranks: their input is `ancient`.
# The Mult-VAE and NeuMF ranks were retrained with their profiles (ranks and profile together, by
# `itemsampling train`) on the machine their train.json names (CPU, BLAS and torch kernels), after
# the earlier ranks had not been reproduced by refits there. A torch fit depends on torch's CPU
# kernels: on another machine a refit may move ranks, and `itemsampling profile` then refuses.


rule popularity_profile:
    input:
        unseen=ancient(ranks_file("{dataset}", "{model}", "unseen")),
        code=[ancient(path) for path in RANKS_CODE + [str(_PACKAGE_DIR / "popularity_profiles.py"),
                                                       str(_PACKAGE_DIR / "commands" / "profile.py")]],
    output:
        profile_file("{dataset}", "{model}"),
    log:
        "results/logs/profile/{dataset}/{model}.log",
    benchmark:
        "results/logs/profile/{dataset}/{model}.benchmark.tsv",
    params:
        options=lambda wildcards: set_options(wildcards.dataset, wildcards.model),
        seed=config["seed"],
        out_dir=lambda wildcards, input: str(Path(input.unseen).parent),
    threads: 2
    shell:
        BLAS_THREADS
        + "itemsampling profile --dataset {wildcards.dataset} --model {wildcards.model} "
        "{params.options} --seed {params.seed} --out-dir {params.out_dir} > {log} 2>&1"


# The ratio split: every held-out item of a random fifth of each user's items, ranked under `unseen`
# by the model refitted on the rest with the hyperparameters of its leave-one-out run (a new fit:
# the training data differ). Committed like the leave-one-out ranks, with `ancient` inputs.
rule train_and_rank_ratio:
    input:
        [ancient(path) for path in RANKS_CODE],
    output:
        ranks=ratio_ranks_file("{dataset}", "{model}"),
        info=ratio_info("{dataset}", "{model}"),
    log:
        "results/logs/train/{dataset}/ratio/{model}.log",
    benchmark:
        "results/logs/train/{dataset}/ratio/{model}.benchmark.tsv",
    params:
        options=lambda wildcards: set_options(wildcards.dataset, wildcards.model),
        seed=config["seed"],
        fraction=config["ratio_split"]["test_fraction"],
        out_dir=lambda wildcards, output: str(Path(output.info).parent),
    threads: 2
    shell:
        BLAS_THREADS
        + "itemsampling train --split ratio --test-fraction {params.fraction} --dataset {wildcards.dataset} "
        "--model {wildcards.model} {params.options} --seed {params.seed} --out-dir {params.out_dir} > {log} 2>&1"
