//! The wgpu device of the GPU K-Means: finding an adapter, compiling the eight kernels, and the
//! few operations the rest of `kmeans::gpu` builds on (a buffer from bytes, a bind group, a
//! dispatch, work submitted without waiting, one checked round trip that runs recorded work
//! and reads regions back).

use std::borrow::Cow;

/// Workgroup size of every kernel; a block of this many points never mixes runs.
pub const BLOCK: usize = 64;
/// Workgroups per row of a 2-D dispatch.
const MAX_GROUPS_PER_ROW: u32 = 65_535;

/// Why the GPU path is not available or failed.
#[derive(Debug, Clone, thiserror::Error)]
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
    #[error("a block of 64 points of {0} dimensions exceeds the device's storage-binding limit")]
    TooWide(usize),
    #[error("the batch's {buffer} ({bytes} bytes) exceed the device's limit of {limit} bytes")]
    BatchTooLarge {
        buffer: &'static str,
        bytes: u64,
        limit: u64,
    },
    #[error("the GPU has no memory left for the batch: {0}")]
    OutOfMemory(String),
}

impl GpuError {
    /// Whether a batch with fewer runs could get past this error (a buffer over a limit, or
    /// no memory left), so the batch is worth splitting.
    pub fn splits(&self) -> bool {
        matches!(
            self,
            GpuError::TooLarge(..) | GpuError::BatchTooLarge { .. } | GpuError::OutOfMemory(_)
        )
    }
}

/// A wgpu device and queue, with what the K-Means kernels need to know of its adapter.
pub struct GpuDevice {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub info: wgpu::AdapterInfo,
    /// The device's `max_storage_buffer_binding_size`.
    pub max_binding: u64,
    /// The device's `max_buffer_size`.
    pub max_buffer: u64,
    /// Whether shaders have f64 (`SHADER_F64`): the seeding's draws then sum in f64, as the CPU
    /// path does, else in f32. Tests clear it to check the f32 draws.
    pub f64: bool,
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
        let features = adapter.features() & wgpu::Features::SHADER_F64;
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("c2s-kmeans"),
            required_features: features,
            required_limits: limits.clone(),
            ..Default::default()
        }))
        .map_err(|e| GpuError::Device(e.to_string()))?;
        Ok(GpuDevice {
            device,
            queue,
            info,
            max_binding: limits.max_storage_buffer_binding_size,
            max_buffer: limits.max_buffer_size,
            f64: features.contains(wgpu::Features::SHADER_F64),
        })
    }
}

/// A compiled kernel and its bind group layout (bindings 0, 1, … in the order a dispatch
/// passes its buffers).
pub struct Kernel {
    pipeline: wgpu::ComputePipeline,
    layout: wgpu::BindGroupLayout,
    name: &'static str,
}

/// The kernels of the batched K-Means.
pub struct Kernels {
    /// Nearest and runner-up centroid per point (`kmeans_assign.wgsl`).
    pub assign: Kernel,
    /// Per-cluster fixed-point sums and counts (`kmeans_update.wgsl`).
    pub sums: Kernel,
    /// Sums to unit-length centroids (`kmeans_finish.wgsl`).
    pub finish: Kernel,
    /// One k-means++ step: distances to the new center, block sums (`kmeans_seed.wgsl`).
    pub seed: Kernel,
    /// Greedy k-means++ candidates' potentials (`kmeans_potential.wgsl`).
    pub potential: Kernel,
    /// The candidate with the lowest potential (`kmeans_choose.wgsl`).
    pub choose: Kernel,
    /// D² sampling of the candidates (`kmeans_sample.wgsl`).
    pub sample: Kernel,
    /// The candidates' rows (`kmeans_gather.wgsl`).
    pub gather: Kernel,
}

/// The device, its queue and the compiled kernels.
pub struct Gpu {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    pub info: wgpu::AdapterInfo,
    pub max_binding: u64,
    pub max_buffer: u64,
    /// Whether the seeding's draws sum in f64 ([`GpuDevice::f64`]).
    pub f64: bool,
    pub kernels: Kernels,
    /// Round trips so far (submissions waited for).
    pub rounds: std::sync::atomic::AtomicUsize,
    /// The first error no error scope caught (wgpu's default would panic); the next round
    /// trip returns it.
    uncaptured: std::sync::Arc<std::sync::Mutex<Option<String>>>,
}

/// What every kernel shares (params, work table, assignment), prepended to each.
const COMMON: &str = include_str!("../../../shaders/kmeans_common.wgsl");

impl Gpu {
    /// Compiles the kernels on a device the caller opened.
    pub fn on(dev: GpuDevice) -> Result<Gpu, GpuError> {
        let GpuDevice {
            device,
            queue,
            info,
            max_binding,
            max_buffer,
            f64,
        } = dev;
        let uncaptured = std::sync::Arc::new(std::sync::Mutex::new(None));
        let slot = std::sync::Arc::clone(&uncaptured);
        device.on_uncaptured_error(std::sync::Arc::new(move |e: wgpu::Error| {
            let mut first = slot.lock().unwrap_or_else(|p| p.into_inner());
            first.get_or_insert_with(|| e.to_string());
        }));
        let scope = device.push_error_scope(wgpu::ErrorFilter::Validation);
        let kernel = |name: &'static str, source: &str, entry: &str| {
            compile(&device, name, &format!("{COMMON}\n{source}"), entry)
        };
        // The type kmeans_sample.wgsl sums in.
        let real = if f64 { "f64" } else { "f32" };
        let kernels = Kernels {
            assign: kernel(
                "kmeans_assign",
                include_str!("../../../shaders/kmeans_assign.wgsl"),
                "main",
            ),
            sums: kernel(
                "kmeans_update",
                include_str!("../../../shaders/kmeans_update.wgsl"),
                "sums",
            ),
            finish: kernel(
                "kmeans_finish",
                include_str!("../../../shaders/kmeans_finish.wgsl"),
                "finish",
            ),
            seed: kernel(
                "kmeans_seed",
                include_str!("../../../shaders/kmeans_seed.wgsl"),
                "main",
            ),
            potential: kernel(
                "kmeans_potential",
                include_str!("../../../shaders/kmeans_potential.wgsl"),
                "main",
            ),
            choose: kernel(
                "kmeans_choose",
                include_str!("../../../shaders/kmeans_choose.wgsl"),
                "main",
            ),
            sample: kernel(
                "kmeans_sample",
                &format!(
                    "alias real = {real};\n{}",
                    include_str!("../../../shaders/kmeans_sample.wgsl")
                ),
                "main",
            ),
            gather: kernel(
                "kmeans_gather",
                include_str!("../../../shaders/kmeans_gather.wgsl"),
                "main",
            ),
        };
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(GpuError::Wgpu(e.to_string()));
        }
        Ok(Gpu {
            device,
            queue,
            info,
            max_binding,
            max_buffer,
            f64,
            kernels,
            rounds: Default::default(),
            uncaptured,
        })
    }

    /// The error no scope caught since the last call, if any.
    fn take_uncaptured(&self) -> Result<(), GpuError> {
        let mut slot = self.uncaptured.lock().unwrap_or_else(|p| p.into_inner());
        match slot.take() {
            Some(e) => Err(GpuError::Wgpu(e)),
            None => Ok(()),
        }
    }

    /// A buffer holding `bytes` (at least 16 bytes, a multiple of 4).
    pub fn upload(&self, label: &str, bytes: &[u8], usage: wgpu::BufferUsages) -> wgpu::Buffer {
        let buf = self.zeroed(label, bytes.len() as u64, usage);
        self.queue.write_buffer(&buf, 0, bytes);
        buf
    }

    /// A zero-filled buffer of at least `size` bytes (16 at least, a multiple of 4), which
    /// can be written, cleared and read back.
    pub fn zeroed(&self, label: &str, size: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some(label),
            size: size.max(16).next_multiple_of(4),
            usage: usage | wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        })
    }

    /// A uniform buffer holding `value`.
    pub fn uniform<T: bytemuck::Pod>(&self, value: &T) -> wgpu::Buffer {
        self.upload(
            "params",
            bytemuck::bytes_of(value),
            wgpu::BufferUsages::UNIFORM,
        )
    }

    /// A bind group for `kernel`, its bindings 0, 1, … being `buffers`.
    pub fn bind(&self, kernel: &Kernel, buffers: &[&wgpu::Buffer]) -> wgpu::BindGroup {
        let entries: Vec<wgpu::BindGroupEntry> = buffers
            .iter()
            .enumerate()
            .map(|(i, b)| wgpu::BindGroupEntry {
                binding: i as u32,
                resource: b.as_entire_binding(),
            })
            .collect();
        self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some(kernel.name),
            layout: &kernel.layout,
            entries: &entries,
        })
    }

    /// Records `kernel` over `workgroups` workgroups (2-D past 65,535: the kernel's params
    /// carry the workgroups per row, [`grid`]), its bindings 0, 1, … being `buffers`.
    pub fn dispatch(
        &self,
        enc: &mut wgpu::CommandEncoder,
        kernel: &Kernel,
        buffers: &[&wgpu::Buffer],
        workgroups: u32,
    ) {
        if workgroups == 0 {
            return;
        }
        let bind = self.bind(kernel, buffers);
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some(kernel.name),
            timestamp_writes: None,
        });
        run(&mut pass, kernel, &bind, workgroups);
    }

    /// Records work into one compute pass and submits it without waiting (the queue runs
    /// submissions in order; a later [`Gpu::round`] waits for all of them).
    pub fn submit(&self, record: impl FnOnce(&mut wgpu::ComputePass)) {
        let mut enc = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        {
            let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: None,
                timestamp_writes: None,
            });
            record(&mut pass);
        }
        self.queue.submit([enc.finish()]);
    }

    /// One round trip: records work with `record`, copies each `(buffer, offset, bytes)`
    /// region out, submits, waits and returns the regions' bytes. Validation errors of the
    /// recorded work come back as `GpuError::Wgpu`.
    pub fn round(
        &self,
        record: impl FnOnce(&mut wgpu::CommandEncoder),
        reads: &[(&wgpu::Buffer, u64, u64)],
    ) -> Result<Vec<Vec<u8>>, GpuError> {
        self.rounds
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let scope = self.device.push_error_scope(wgpu::ErrorFilter::Validation);
        let mut enc = self
            .device
            .create_command_encoder(&wgpu::CommandEncoderDescriptor { label: None });
        record(&mut enc);
        let total: u64 = reads.iter().map(|r| r.2).sum();
        let staging = (total > 0).then(|| {
            self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("readback"),
                size: total.next_multiple_of(4),
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        });
        if let Some(staging) = &staging {
            let mut at = 0;
            for &(buf, offset, size) in reads {
                if size > 0 {
                    enc.copy_buffer_to_buffer(buf, offset, staging, at, size);
                }
                at += size;
            }
        }
        self.queue.submit([enc.finish()]);
        if let Some(e) = pollster::block_on(scope.pop()) {
            return Err(GpuError::Wgpu(e.to_string()));
        }
        self.take_uncaptured()?;
        let Some(staging) = staging else {
            self.device
                .poll(wgpu::PollType::wait_indefinitely())
                .map_err(|e| GpuError::Wgpu(e.to_string()))?;
            return Ok(vec![Vec::new(); reads.len()]);
        };
        let slice = staging.slice(..);
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
        let mut out = Vec::with_capacity(reads.len());
        let mut at = 0usize;
        for &(_, _, size) in reads {
            out.push(bytes[at..at + size as usize].to_vec());
            at += size as usize;
        }
        drop(bytes);
        staging.unmap();
        Ok(out)
    }
}

/// Compiles `entry` of `source` into a kernel (validation errors go to the caller's scope).
fn compile(device: &wgpu::Device, name: &'static str, source: &str, entry: &str) -> Kernel {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(name),
        source: wgpu::ShaderSource::Wgsl(Cow::Borrowed(source)),
    });
    let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(name),
        layout: None,
        module: &module,
        entry_point: Some(entry),
        compilation_options: Default::default(),
        cache: None,
    });
    Kernel {
        layout: pipeline.get_bind_group_layout(0),
        pipeline,
        name,
    }
}

/// Records `kernel` with its bind group over `workgroups` workgroups into a pass (each
/// dispatch sees the writes of the ones before it).
pub fn run(pass: &mut wgpu::ComputePass, kernel: &Kernel, bind: &wgpu::BindGroup, workgroups: u32) {
    if workgroups == 0 {
        return;
    }
    let (x, y) = grid(workgroups);
    pass.set_pipeline(&kernel.pipeline);
    pass.set_bind_group(0, bind, &[]);
    pass.dispatch_workgroups(x, y, 1);
}

/// Workgroups per row and rows of a 2-D dispatch of `workgroups`.
pub fn grid(workgroups: u32) -> (u32, u32) {
    let x = workgroups.clamp(1, MAX_GROUPS_PER_ROW);
    (x, workgroups.div_ceil(x))
}

/// `bytes` as values of a plain type (copied, so alignment does not matter).
pub fn cast<T: bytemuck::Pod>(bytes: &[u8]) -> Vec<T> {
    bytemuck::pod_collect_to_vec(bytes)
}
