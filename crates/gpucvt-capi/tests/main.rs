//! The C library against the Rust API, through C and C++ programs built with the system
//! compiler (`cc`, `c++`) under AddressSanitizer and UndefinedBehaviorSanitizer.

mod check;
mod common;
mod compare;
mod docs;
mod exports;
mod header;
mod package;
mod programs;
