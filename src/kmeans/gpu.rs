//! GPU K-Means: the assignment step (nearest and runner-up centroid) in a WGSL compute shader via
//! wgpu, chunked under the device's storage-binding limit and dispatched in 2-D; k-means++
//! seeding and the centroid update run on the CPU (see `update_centroids`). Runs smaller than
//! `min_work` stay on the CPU.

use std::borrow::Cow;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::seed::kmeans_pp;
use super::{KmeansBackend, KmeansParams, KmeansResult, member_means};
use crate::matrix::Matrix;
use crate::rng::Rng;

const SHADER: &str = include_str!("../../shaders/kmeans_assign.wgsl");
const WORKGROUP: u32 = 64;
const MAX_GROUPS_PER_ROW: u32 = 65_535;

/// Why the GPU path is not available or failed.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    #[error("no GPU adapter: {0}")]
    NoAdapter(String),
    #[error(
        "the only adapter is a CPU emulation ({0}); it is used only when kmeans.device = \"gpu\""
    )]
    CpuAdapter(String),
    #[error("cannot open the GPU device: {0}")]
    Device(String),
    #[error("wgpu error: {0}")]
    Wgpu(String),
    #[error("{0} centroids of {1} dimensions exceed the device's storage-binding limit")]
    TooLarge(usize, usize),
}

/// One (nearest, runner-up) result per point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Assigned {
    pub best: u32,
    pub s1: f32,
    pub second: Option<(u32, f32)>,
}

/// The wgpu device and the compiled assignment pipeline.
pub struct GpuKmeans {
    device: wgpu::Device,
    queue: wgpu::Queue,
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
    info: wgpu::AdapterInfo,
    max_binding: u64,
    /// Points per dispatch chunk (None: as many as the binding limit allows). Tests set it.
    pub chunk_points: Option<usize>,
    /// A run with fewer points × clusters × dimensions runs on the CPU (0: every run on the
    /// GPU; builds set `kmeans.gpu_min_work`).
    min_work: u64,
    /// Runs on the GPU, and runs below `min_work` on the CPU.
    gpu_runs: AtomicUsize,
    small_runs: AtomicUsize,
    /// The last error the GPU path hit (the run then finished on the CPU).
    pub last_error: Mutex<Option<String>>,
}

/// A wgpu device and queue, with what the assignment pipeline needs to know of its adapter.
pub struct GpuDevice {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub info: wgpu::AdapterInfo,
    /// The device's `max_storage_buffer_binding_size`.
    pub max_binding: u64,
}

impl GpuDevice {
    /// Opens the first Vulkan adapter with its own limits; a CPU-emulated adapter (lavapipe)
    /// only when `allow_cpu_adapter`.
    pub fn acquire(allow_cpu_adapter: bool) -> Result<GpuDevice, GpuError> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: wgpu::Backends::VULKAN,
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        });
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            ..Default::default()
        }))
        .map_err(|e| GpuError::NoAdapter(e.to_string()))?;
        let info = adapter.get_info();
        if info.device_type == wgpu::DeviceType::Cpu && !allow_cpu_adapter {
            return Err(GpuError::CpuAdapter(info.name.clone()));
        }
        let limits = adapter.limits();
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("c2s-kmeans"),
            required_limits: limits.clone(),
            ..Default::default()
        }))
        .map_err(|e| GpuError::Device(e.to_string()))?;
        Ok(GpuDevice {
            device,
            queue,
            info,
            max_binding: limits.max_storage_buffer_binding_size,
        })
    }
}

/// The shader's `Params` uniform.
#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    /// Points in this chunk.
    n: u32,
    /// Centroids.
    k: u32,
    /// Dimensions.
    d: u32,
    /// Workgroups per row of the 2-D dispatch.
    x_groups: u32,
}

/// The shader's `Assignment`, one per point, as read back.
#[repr(C)]
#[derive(Debug, Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct Assignment {
    best: u32,
    /// `u32::MAX` when there is no runner-up.
    second: u32,
    s1: f32,
    s2: f32,
}

impl From<Assignment> for Assigned {
    fn from(a: Assignment) -> Assigned {
        Assigned {
            best: a.best,
            s1: a.s1,
            second: (a.s2 > -1.0e38 && a.second != u32::MAX).then_some((a.second, a.s2)),
        }
    }
}

impl GpuKmeans {
    /// Opens a device ([`GpuDevice::acquire`]) and compiles the pipeline on it.
    pub fn new(allow_cpu_adapter: bool) -> Result<GpuKmeans, GpuError> {
        GpuKmeans::on(GpuDevice::acquire(allow_cpu_adapter)?)
    }

    /// Compiles the assignment pipeline on a device the caller opened (tests inject one).
    pub fn on(gpu: GpuDevice) -> Result<GpuKmeans, GpuError> {
        let GpuDevice {
            device,
            queue,
            info,
            max_binding,
        } = gpu;
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("kmeans_assign.wgsl"),
            source: wgpu::ShaderSource::Wgsl(Cow::Borrowed(SHADER)),
        });
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("kmeans_assign"),
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: Default::default(),
            cache: None,
        });
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(GpuError::Wgpu(e.to_string()));
        }
        let layout = pipeline.get_bind_group_layout(0);
        Ok(GpuKmeans {
            device,
            queue,
            pipeline,
            layout,
            info,
            max_binding,
            chunk_points: None,
            min_work: 0,
            gpu_runs: AtomicUsize::new(0),
            small_runs: AtomicUsize::new(0),
            last_error: Mutex::new(None),
        })
    }

    /// Runs with fewer than `min_work` points × clusters × dimensions go to the CPU.
    pub fn with_min_work(mut self, min_work: u64) -> GpuKmeans {
        self.min_work = min_work;
        self
    }

    /// The adapter in words.
    pub fn adapter(&self) -> String {
        format!(
            "{} ({:?}, {:?})",
            self.info.name, self.info.device_type, self.info.backend
        )
    }

    fn buffer(&self, label: &str, bytes: &[u8], usage: wgpu::BufferUsages) -> wgpu::Buffer {
        let buf = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: (bytes.len() as u64).max(16).next_multiple_of(4),
            usage: usage | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        self.queue.write_buffer(&buf, 0, bytes);
        buf
    }

    /// Nearest and runner-up centroid of every point, on the GPU.
    pub fn assign(&self, data: &Matrix, centroids: &Matrix) -> Result<Vec<Assigned>, GpuError> {
        let d = data.dims;
        let row_bytes = (d * 4) as u64;
        if (centroids.rows as u64) * row_bytes > self.max_binding {
            return Err(GpuError::TooLarge(centroids.rows, d));
        }
        let by_limit = (self.max_binding / row_bytes).max(1) as usize;
        let chunk = self.chunk_points.unwrap_or(by_limit).min(by_limit).max(1);
        let cent = self.buffer(
            "centroids",
            bytemuck::cast_slice(&centroids.data),
            wgpu::BufferUsages::STORAGE,
        );
        let mut out = Vec::with_capacity(data.rows);
        for start in (0..data.rows).step_by(chunk) {
            let n = chunk.min(data.rows - start);
            out.extend(self.assign_chunk(
                &data.data[start * d..(start + n) * d],
                n,
                centroids.rows,
                d,
                &cent,
            )?);
        }
        Ok(out)
    }

    fn assign_chunk(
        &self,
        points: &[f32],
        n: usize,
        k: usize,
        d: usize,
        cent: &wgpu::Buffer,
    ) -> Result<Vec<Assigned>, GpuError> {
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let groups = (n as u32).div_ceil(WORKGROUP);
        let x_groups = groups.min(MAX_GROUPS_PER_ROW);
        let y_groups = groups.div_ceil(x_groups);
        let params = Params {
            n: n as u32,
            k: k as u32,
            d: d as u32,
            x_groups,
        };
        let pts = self.buffer(
            "points",
            bytemuck::cast_slice(points),
            wgpu::BufferUsages::STORAGE,
        );
        let par = self.buffer(
            "params",
            bytemuck::bytes_of(&params),
            wgpu::BufferUsages::UNIFORM,
        );
        let out_bytes = (n * std::mem::size_of::<Assignment>()) as u64;
        let out = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("assignments"),
            size: out_bytes,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let read = self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size: out_bytes,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let bind = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("kmeans_assign"),
            layout: &self.layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: pts.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: cent.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: out.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 3,
                    resource: par.as_entire_binding(),
                },
            ],
        });
        let mut enc = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: None,
                timestamp_writes: None,
            });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &bind, &[]);
            pass.dispatch_workgroups(x_groups, y_groups, 1);
        }
        enc.copy_buffer_to_buffer(&out, 0, &read, 0, out_bytes);
        self.queue.submit([enc.finish()]);
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(GpuError::Wgpu(e.to_string()));
        }
        let slice = read.slice(..);
        let (tx, rx) = std::sync::mpsc::channel();
        slice.map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        self.device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|e| GpuError::Wgpu(e.to_string()))?;
        rx.recv()
            .map_err(|e| GpuError::Wgpu(e.to_string()))?
            .map_err(|e| GpuError::Wgpu(e.to_string()))?;
        let bytes = slice
            .get_mapped_range()
            .map_err(|e| GpuError::Wgpu(e.to_string()))?;
        // Copied out, so the mapped range's alignment does not matter.
        let assigned: Vec<Assignment> = bytemuck::pod_collect_to_vec(&bytes);
        drop(bytes);
        read.unmap();
        Ok(assigned.into_iter().map(Assigned::from).collect())
    }

    /// Lloyd iterations with GPU assignment; `None` (and `last_error` set) if the GPU failed.
    fn lloyd(
        &self,
        data: &Matrix,
        params: &KmeansParams,
        rng: &mut Rng,
    ) -> Result<KmeansResult, GpuError> {
        let n = data.rows;
        let k = params.k.clamp(1, n.max(1));
        let mut centroids = Matrix::new(data.dims);
        for s in kmeans_pp(data, k, rng) {
            centroids.push(data.row(s));
        }
        let mut assigned = self.assign(data, &centroids)?;
        let mut iterations = 0;
        for _ in 0..params.max_iter {
            iterations += 1;
            centroids = update_centroids(data, &assigned, &centroids);
            let next = self.assign(data, &centroids)?;
            let changed = next
                .iter()
                .zip(&assigned)
                .filter(|(a, b)| a.best != b.best)
                .count();
            assigned = next;
            if (changed as f64) <= params.tol * n as f64 {
                break;
            }
        }
        Ok(KmeansResult {
            centroids,
            assign: assigned.iter().map(|a| a.best).collect(),
            top1: assigned.iter().map(|a| a.s1).collect(),
            second: assigned.iter().map(|a| a.second).collect(),
            inertia: assigned.iter().map(|a| 1.0 - a.s1 as f64).sum(),
            iterations,
        })
    }
}

/// New centroids on the CPU: normalized member means; an empty cluster takes the worst-served point.
/// A CPU update is used because it is one pass over the data in memory, while a GPU segmented
/// reduction would need the assignments sorted first; it has not been measured on a real GPU.
fn update_centroids(data: &Matrix, assigned: &[Assigned], old: &Matrix) -> Matrix {
    let k = old.rows;
    let dims = data.dims;
    let (mut out, members) = member_means(data, assigned.iter().map(|a| a.best), old);
    let mut far: Vec<(f32, usize)> = assigned
        .iter()
        .enumerate()
        .map(|(i, a)| (a.s1, i))
        .collect();
    far.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let empty = (0..k).filter(|&j| members[j].is_empty());
    for (j, (_, i)) in empty.zip(far) {
        out[j * dims..(j + 1) * dims].copy_from_slice(data.row(i));
    }
    Matrix {
        rows: k,
        dims,
        data: out,
    }
}

impl KmeansBackend for GpuKmeans {
    fn device(&self) -> String {
        if let Some(e) = self
            .last_error
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
        {
            return format!("cpu (the GPU {} failed: {e})", self.adapter());
        }
        let gpu = self.gpu_runs.load(Ordering::Relaxed);
        let small = self.small_runs.load(Ordering::Relaxed);
        match (gpu, small) {
            (0, s) if s > 0 => format!(
                "cpu (every run was smaller than kmeans.gpu_min_work; the GPU {} was not used)",
                self.adapter()
            ),
            (_, 0) => format!("gpu: {}", self.adapter()),
            (g, s) => format!(
                "gpu: {} ({g} run{} on the GPU; {s} smaller than kmeans.gpu_min_work on the CPU)",
                self.adapter(),
                if g == 1 { "" } else { "s" }
            ),
        }
    }

    fn run(&self, data: &Matrix, params: &KmeansParams) -> KmeansResult {
        let work = (data.rows as u64)
            .saturating_mul(params.k as u64)
            .saturating_mul(data.dims as u64);
        if work < self.min_work {
            self.small_runs.fetch_add(1, Ordering::Relaxed);
            return super::CpuKmeans.run(data, params);
        }
        self.gpu_runs.fetch_add(1, Ordering::Relaxed);
        let mut rng = Rng::new(params.seed);
        let mut best: Option<KmeansResult> = None;
        for _ in 0..params.n_init.max(1) {
            match self.lloyd(data, params, &mut rng) {
                Ok(r) => {
                    if best.as_ref().is_none_or(|b| r.inertia < b.inertia) {
                        best = Some(r);
                    }
                }
                Err(e) => {
                    *self.last_error.lock().unwrap_or_else(|p| p.into_inner()) =
                        Some(e.to_string());
                    return super::CpuKmeans.run(data, params);
                }
            }
        }
        best.expect("at least one restart")
    }
}
