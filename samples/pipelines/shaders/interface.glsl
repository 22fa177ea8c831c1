// The interface between the vertex and fragment stages, shared by every
// stage so that separately built programs match by location and type.
#define UV_LOCATION 0
