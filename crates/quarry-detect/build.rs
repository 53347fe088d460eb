//! Precomputes at build time what would otherwise be built on first use in every process: the
//! gazetteer's lookup table (`build/gazetteer.rs`) and the phone metadata split by calling code
//! (`build/phone_metadata.rs`). First calls then cost microseconds instead of tens of
//! milliseconds of CPU.

#[path = "build/gazetteer.rs"]
mod gazetteer;
#[path = "build/phone_metadata.rs"]
mod phone_metadata;
#[path = "src/entity/table_format.rs"]
mod table_format;
#[path = "src/entity/table_hash.rs"]
mod table_hash;

use std::path::PathBuf;

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    gazetteer::write(&out);
    phone_metadata::write(&out);
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-changed=build");
    println!("cargo::rerun-if-changed=data");
    println!("cargo::rerun-if-changed=src/entity/table_format.rs");
    println!("cargo::rerun-if-changed=src/entity/table_hash.rs");
}
