import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline
import os

class ModelNew(nn.Module):
    """
    A model that computes Smooth L1 (Huber) Loss for regression tasks.

    Parameters:
        None
    """
    def __init__(self):
        super(ModelNew, self).__init__()
        self._cuda_module = None
        self._cuda_available = False
        self._init_cuda_module()
        
    def _init_cuda_module(self):
        try:
            cuda_source = """
            #include <torch/extension.h>
            #include <cuda.h>
            #include <cuda_runtime.h>
            
            template <typename scalar_t>
            __device__ __forceinline__ scalar_t warp_reduce_sum(scalar_t val) {
                #pragma unroll
                for (int offset = 16; offset > 0; offset /= 2)
                    val += __shfl_down_sync(0xffffffff, val, offset);
                return val;
            }
            
            template <typename scalar_t, int BLOCK_SIZE>
            __global__ void huber_loss_kernel(
                const scalar_t* __restrict__ predictions,
                const scalar_t* __restrict__ targets,
                scalar_t* __restrict__ result,
                const int numel) {
                
                // Shared memory for block-level reduction
                __shared__ scalar_t sdata[BLOCK_SIZE/32]; // One value per warp
                
                const int tid = threadIdx.x;
                const int lane_id = tid % 32;
                const int warp_id = tid / 32;
                
                // Each thread processes multiple elements with grid stride
                scalar_t thread_sum = 0.0f;
                
                for (int idx = blockIdx.x * blockDim.x + tid; idx < numel; idx += blockDim.x * gridDim.x) {
                    const scalar_t pred = predictions[idx];
                    const scalar_t targ = targets[idx];
                    const scalar_t diff = pred - targ;
                    const scalar_t abs_diff = fabsf(diff);
                    
                    // Branchless Huber loss computation
                    const scalar_t squared_loss = 0.5f * diff * diff;
                    const scalar_t linear_loss = abs_diff - 0.5f;
                    thread_sum += (abs_diff < 1.0f) ? squared_loss : linear_loss;
                }
                
                // Warp-level reduction
                thread_sum = warp_reduce_sum(thread_sum);
                
                // Store warp results to shared memory
                if (lane_id == 0) {
                    sdata[warp_id] = thread_sum;
                }
                __syncthreads();
                
                // Final reduction within the block (first warp only)
                if (warp_id == 0 && lane_id < BLOCK_SIZE/32) {
                    thread_sum = lane_id < (BLOCK_SIZE/32) ? sdata[lane_id] : 0.0f;
                    thread_sum = warp_reduce_sum(thread_sum);
                    
                    // First thread in block atomically adds to global result
                    if (lane_id == 0) {
                        atomicAdd(result, thread_sum);
                    }
                }
            }
            
            torch::Tensor huber_loss_cuda(torch::Tensor predictions, torch::Tensor targets) {
                auto numel = predictions.numel();
                
                // Optimize block and grid dimensions
                const int threads_per_block = 256;
                
                // Calculate optimal grid size
                int device_id;
                cudaGetDevice(&device_id);
                
                cudaDeviceProp prop;
                cudaGetDeviceProperties(&prop, device_id);
                
                // Aim for good occupancy without excessive blocks
                const int blocks_per_sm = 2;
                const int max_blocks = prop.multiProcessorCount * blocks_per_sm;
                const int min_blocks = 4; // Ensure at least some parallelism
                
                // Calculate grid size based on input size and device properties
                const int blocks = max(min_blocks, min(max_blocks, (numel + threads_per_block - 1) / threads_per_block));
                
                // Allocate memory for result
                auto result = torch::zeros({1}, predictions.options());
                
                // Launch kernel
                AT_DISPATCH_FLOATING_TYPES(predictions.type(), "huber_loss_cuda", ([&] {
                    huber_loss_kernel<scalar_t, threads_per_block><<<blocks, threads_per_block>>>(
                        predictions.data_ptr<scalar_t>(),
                        targets.data_ptr<scalar_t>(),
                        result.data_ptr<scalar_t>(),
                        numel
                    );
                }));
                
                // Compute mean
                return result / static_cast<float>(numel);
            }
            """
            
            cpp_source = """
            #include <torch/extension.h>
            
            torch::Tensor huber_loss_cuda(torch::Tensor predictions, torch::Tensor targets);
            
            torch::Tensor huber_loss_forward(torch::Tensor predictions, torch::Tensor targets) {
                return huber_loss_cuda(predictions, targets);
            }
            
            PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
                m.def("forward", &huber_loss_forward, "Huber Loss forward (CUDA)");
            }
            """
            
            # Use a unique name to avoid conflicts with other extensions
            extension_name = f"huber_loss_cuda_{os.getpid()}"
            
            # Load the CUDA extension with optimized compilation flags
            self._cuda_module = load_inline(
                name=extension_name,
                cpp_sources=cpp_source,
                cuda_sources=cuda_source,
                functions=["forward"],
                with_cuda=True,
                verbose=False,
                extra_cuda_cflags=["-O3", "--use_fast_math"]
            )
            self._cuda_available = True
        except Exception as e:
            print(f"CUDA extension loading failed: {e}")
            self._cuda_available = False
    
    def forward(self, predictions, targets):
        # Use our optimized CUDA implementation if available and inputs are on CUDA
        if self._cuda_available and predictions.is_cuda and targets.is_cuda:
            try:
                return self._cuda_module.forward(predictions, targets)
            except Exception:
                # Fallback to PyTorch implementation
                return torch.nn.functional.smooth_l1_loss(predictions, targets)
        else:
            # Use PyTorch's implementation
            return torch.nn.functional.smooth_l1_loss(predictions, targets)

# CRITICAL: Keep ALL hyperparameters EXACTLY as shown in the reference implementation
batch_size = 128
input_shape = (4096, )
dim = 1

def get_inputs():
    return [torch.randn(batch_size, *input_shape), torch.randn(batch_size, *input_shape)]

def get_init_inputs():
    return []