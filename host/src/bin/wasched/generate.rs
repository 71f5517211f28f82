//! `wasched generate`: a deterministic synthetic snapshot.

use std::process::ExitCode;

use clap::ValueEnum;

#[derive(Clone, Copy, ValueEnum)]
/// Output formats of `generate`.
enum SnapshotFormat {
    Yaml,
    Json,
}

/// The arguments of `wasched generate`.
#[derive(clap::Args)]
pub struct Args {
    /// Number of nodes.
    #[arg(long, default_value_t = 100)]
    nodes: usize,
    /// Number of pending pods.
    #[arg(long, default_value_t = 200)]
    pending_pods: usize,
    /// Random seed: the same arguments print the same snapshot.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Node mix.
    #[arg(long, value_enum, default_value_t = wasched::generate::Shape::Gpu)]
    shape: wasched::generate::Shape,
    /// Output format (JSON reads back several times faster).
    #[arg(long, short, value_enum, default_value_t = SnapshotFormat::Yaml)]
    output: SnapshotFormat,
    /// Write the objects as an API server returns them (UIDs, resource
    /// versions, managedFields, node and pod status): a real dump's
    /// shape and size.
    #[arg(long)]
    as_stored: bool,
}

/// Runs `wasched generate`.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let Args {
        nodes,
        pending_pods,
        seed,
        shape,
        output,
        as_stored,
    } = args;
    use wasched::generate;
    let options = generate::Options {
        nodes,
        pending_pods,
        seed,
        shape,
    };
    let mut items = generate::generate(&options)?;
    if as_stored {
        generate::as_stored(&mut items);
    }
    let text = match output {
        SnapshotFormat::Yaml => generate::list_yaml(&options, items)?,
        SnapshotFormat::Json => generate::list_json(items)?,
    };
    print!("{text}");
    Ok(ExitCode::SUCCESS)
}
