//! The workloads, one module each. Every module defines the function once per contender
//! and gathers them in a [`Workload`](crate::Workload) from its `workload()`.

pub mod deep;
pub mod mixed;
pub mod neuron;
pub mod rosenbrock;
pub mod seed;
pub mod tanh_chain;
pub mod tanh_chain_exp;
