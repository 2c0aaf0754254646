# The samples' shared part, included by each sample's CMakeLists.txt (once per build):
#   fashion_mnist          the model, compiled by aotc at build time (aotc_add_model)
#   fashion_mnist_int8     the same quantized to int8, taking the grey bytes as they are
#                          (models/fashion_mnist_int8.fb: tools/export-fashion-mnist-int8)
#   fashion_mnist_core     normalisation and top-k (fashion_mnist_core.h) for either, with
#                          the labels, mean and std read from samples/models/fashion_mnist.json;
#                          no OpenCV (the accuracy test uses it on ARM too); an app links
#                          the model it runs
#   fashion_mnist_sample   the same from OpenCV images (fashion_mnist_sample.h), when OpenCV
#                          was found
include_guard(GLOBAL)

set(FASHION_MNIST_MODEL_DIR ${CMAKE_CURRENT_LIST_DIR}/../models)
aotc_add_model(fashion_mnist MODEL ${FASHION_MNIST_MODEL_DIR}/fashion_mnist.fb)
aotc_add_model(fashion_mnist_int8 MODEL ${FASHION_MNIST_MODEL_DIR}/fashion_mnist_int8.fb)

# The json written by tools/train-fashion-mnist is the one place the normalisation and
# the labels are stated; the generated header copies them.
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${FASHION_MNIST_MODEL_DIR}/fashion_mnist.json)
file(READ ${FASHION_MNIST_MODEL_DIR}/fashion_mnist.json fashion_mnist_json)
string(JSON FASHION_MNIST_MEAN GET "${fashion_mnist_json}" input mean)
string(JSON FASHION_MNIST_STD GET "${fashion_mnist_json}" input std)
string(JSON label_count LENGTH "${fashion_mnist_json}" labels)
set(FASHION_MNIST_LABELS "")
math(EXPR last_label "${label_count} - 1")
foreach(i RANGE ${last_label})
  string(JSON label GET "${fashion_mnist_json}" labels ${i})
  string(APPEND FASHION_MNIST_LABELS "    \"${label}\",\n")
endforeach()
set(generated_dir ${CMAKE_CURRENT_BINARY_DIR}/fashion_mnist_info)
configure_file(${CMAKE_CURRENT_LIST_DIR}/fashion_mnist_info.h.in ${generated_dir}/fashion_mnist_info.h @ONLY)

add_library(fashion_mnist_core STATIC ${CMAKE_CURRENT_LIST_DIR}/fashion_mnist_core.cpp)
set_target_properties(fashion_mnist_core PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
target_include_directories(fashion_mnist_core PUBLIC ${CMAKE_CURRENT_LIST_DIR} ${generated_dir})

if(TARGET opencv_imgproc)
  add_library(fashion_mnist_sample STATIC ${CMAKE_CURRENT_LIST_DIR}/fashion_mnist_sample.cpp)
  set_target_properties(fashion_mnist_sample PROPERTIES CXX_STANDARD 17 CXX_STANDARD_REQUIRED ON)
  target_link_libraries(fashion_mnist_sample PUBLIC fashion_mnist_core opencv_core opencv_imgproc)
endif()
